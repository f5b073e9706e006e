/**
 * SQL of the login limits (`app.login_throttle`): a fixed window per email and
 * per client address, opened by the first attempt in it. An attempt is
 * reserved, and committed, before the password is checked, so concurrent
 * guesses each see the others and none slips past the limit; the rows stay
 * locked only for that one short statement, not for the bcrypt check.
 */
import type { SecurityLimits } from "../config.ts";
import type { Sql } from "../db.ts";

/**
 * Counts one login attempt against `email` and `address` and returns how many
 * seconds until the first exceeded limit lifts, or 0 when the attempt may go on.
 */
export async function reserveLoginAttempt(
  sql: Sql,
  input: { email: string; address: string; limits: SecurityLimits },
): Promise<number> {
  const { email, address, limits } = input;
  const [row] = await sql<{ retry_after: number }[]>`
    with email_count as (
      insert into app.login_throttle as t (scope, key, attempts, window_started_at)
      values ('email', ${email}, 1, now())
      on conflict (scope, key) do update set
        attempts = case when t.window_started_at <= now() - make_interval(secs => ${limits.loginEmailWindowSeconds})
                        then 1 else t.attempts + 1 end,
        window_started_at = case when t.window_started_at <= now() - make_interval(secs => ${limits.loginEmailWindowSeconds})
                                 then now() else t.window_started_at end
      returning attempts, window_started_at + make_interval(secs => ${limits.loginEmailWindowSeconds}) as ends_at
    ), address_count as (
      insert into app.login_throttle as t (scope, key, attempts, window_started_at)
      values ('address', ${address}, 1, now())
      on conflict (scope, key) do update set
        attempts = case when t.window_started_at <= now() - make_interval(secs => ${limits.loginAddressWindowSeconds})
                        then 1 else t.attempts + 1 end,
        window_started_at = case when t.window_started_at <= now() - make_interval(secs => ${limits.loginAddressWindowSeconds})
                                 then now() else t.window_started_at end
      returning attempts, window_started_at + make_interval(secs => ${limits.loginAddressWindowSeconds}) as ends_at
    )
    select greatest(
      case when e.attempts > ${limits.loginMaxFailuresPerEmail}
           then greatest(1, ceil(extract(epoch from e.ends_at - now()))) else 0 end,
      case when a.attempts > ${limits.loginMaxAttemptsPerAddress}
           then greatest(1, ceil(extract(epoch from a.ends_at - now()))) else 0 end
    )::integer as retry_after
    from email_count e, address_count a`;
  return row.retry_after;
}

/** A successful login wipes the email's count, so its owner starts afresh. */
export async function clearLoginFailures(sql: Sql, email: string): Promise<void> {
  await sql`delete from app.login_throttle where scope = 'email' and key = ${email}`;
}
