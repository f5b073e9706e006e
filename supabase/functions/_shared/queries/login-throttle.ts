/**
 * SQL of the login limits (`app.login_throttle`, counted by the migrations'
 * `app.count_login_attempt`): a fixed window per email and per client
 * address, opened by the first attempt in it. An attempt is
 * reserved, and committed, before the password is checked, so concurrent
 * guesses each see the others and none slips past the limit; the rows stay
 * locked only for that one short statement, not for the bcrypt check.
 */
import type { SecurityLimits } from "../config.ts";
import type { Sql } from "../db.ts";

/**
 * Counts one login attempt against `email` and `address` and returns how many
 * seconds until every exceeded limit has lifted, or 0 when the attempt may go on.
 */
export async function reserveLoginAttempt(
  sql: Sql,
  input: { email: string; address: string; limits: SecurityLimits },
): Promise<number> {
  const { email, address, limits } = input;
  // Both limits count every attempt, so each is called in the FROM clause rather than short-circuited.
  const [row] = await sql<{ retry_after: number }[]>`
    select greatest(by_email, by_address) as retry_after
    from app.count_login_attempt('email', ${email}, ${limits.loginEmailWindowSeconds},
                                 ${limits.loginMaxFailuresPerEmail}) as by_email,
         app.count_login_attempt('address', ${address}, ${limits.loginAddressWindowSeconds},
                                 ${limits.loginMaxAttemptsPerAddress}) as by_address`;
  return row.retry_after;
}

/** A successful login wipes the email's count, so its owner starts afresh. */
export async function clearLoginFailures(sql: Sql, email: string): Promise<void> {
  await sql`delete from app.login_throttle where scope = 'email' and key = ${email}`;
}
