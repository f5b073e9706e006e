/**
 * SQL of `app.reset_mail_quota`: how often one account may be sent a reset
 * code, so the endpoint cannot be used to flood a mailbox or to churn codes.
 */
import type { SecurityLimits } from "../config.ts";
import type { TransactionSql } from "../db.ts";

/**
 * Takes one reset-mail slot for the user and returns true, or returns false
 * without changing anything when the last mail is more recent than the minimum
 * interval or the hour's allowance is used up. The hour is a fixed window
 * opened by its first mail. Run it with the user's row locked.
 */
export async function takeResetMailSlot(
  sql: TransactionSql,
  input: { userId: string; limits: Pick<SecurityLimits, "resetMailMinIntervalSeconds" | "resetMailsPerHour"> },
): Promise<boolean> {
  const { userId, limits } = input;
  const rows = await sql`
    insert into app.reset_mail_quota as q (user_id, last_sent_at, window_started_at, sent_in_window)
    values (${userId}, now(), now(), 1)
    on conflict (user_id) do update set
      last_sent_at = now(),
      window_started_at = case when q.window_started_at <= now() - interval '1 hour'
                               then now() else q.window_started_at end,
      sent_in_window = case when q.window_started_at <= now() - interval '1 hour'
                            then 1 else q.sent_in_window + 1 end
      where q.last_sent_at <= now() - make_interval(secs => ${limits.resetMailMinIntervalSeconds})
        and (q.window_started_at <= now() - interval '1 hour' or q.sent_in_window < ${limits.resetMailsPerHour})
    returning user_id`;
  return rows.length === 1;
}
