/**
 * SQL of the login limits (`app.login_throttle`, counted by the migrations'
 * `app.count_login_attempt`): a fixed window per email and per client
 * address, opened by the first attempt in it. An attempt is
 * reserved, and committed, before the password is checked, so concurrent
 * guesses each see the others and none slips past the limit; the rows stay
 * locked only for that one short statement, not for the bcrypt check.
 */
import type { SecurityLimits } from "../config.ts";
import type { Query } from "../db.ts";

/**
 * Counts one login attempt against `email` and `address` and reads how many
 * seconds until every exceeded limit has lifted, or 0 when the attempt may go on.
 * Run it in a transaction of its own, so the attempt commits before bcrypt runs.
 */
export function reserveLoginAttempt(
  input: { email: string; address: string; limits: SecurityLimits },
): Query<{ retry_after: number }, number> {
  const { email, address, limits } = input;
  return {
    // Both limits count every attempt, so each is called in the FROM clause rather than short-circuited.
    text: `select greatest(by_email, by_address) as retry_after
           from app.count_login_attempt('email', $1, $3, $4) as by_email,
                app.count_login_attempt('address', $2, $5, $6) as by_address`,
    values: [
      email,
      address,
      limits.loginEmailWindowSeconds,
      limits.loginMaxFailuresPerEmail,
      limits.loginAddressWindowSeconds,
      limits.loginMaxAttemptsPerAddress,
    ],
    read: ([row]) => row.retry_after,
  };
}
