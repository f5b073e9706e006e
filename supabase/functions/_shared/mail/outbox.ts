/**
 * SQL of `app.mail_outbox` for the drainers. A claim takes due mails with
 * `for update skip locked` and, in the same statement, counts the attempt and
 * pushes the mail's next attempt out by the backoff, so concurrent drainers
 * never take the same mail, and a mail whose attempt fails or is lost comes
 * due again by itself.
 */
import type { Query, Statement } from "../db/transactions.ts";

/** A queued mail as a drainer delivers it. */
export interface OutboxMail {
  id: string;
  recipient: string;
  subject: string;
  body: string;
  /** Attempts started, this one included. */
  attempts: number;
}

/** Attempts before a mail is given up; the backoff makes that about 64 minutes after it was queued. */
const maxDeliveryAttempts = 9;

/** True when a failure of this attempt gives the mail up. */
export function isLastAttempt(mail: OutboxMail): boolean {
  return mail.attempts >= maxDeliveryAttempts;
}

/**
 * Claims up to `batchSize` due mails. The wait before a mail is due again
 * doubles with each attempt: 15 s, 30 s, 1 min, 2 min, ... capped at 15 min.
 * Its shortest value is above the provider call's timeout, so an attempt still
 * under way is never taken by a second drainer.
 */
export function claimDueMails(batchSize: number): Query<OutboxMail, OutboxMail[]> {
  return {
    text: `update app.mail_outbox as o
           set attempts = o.attempts + 1,
               next_attempt_at = now() + make_interval(secs => least(900, 15 * power(2, o.attempts)))
           from (
             select id from app.mail_outbox
             where sent_at is null and failed_at is null and next_attempt_at <= now()
             order by next_attempt_at, id
             limit $1
             for update skip locked
           ) as due
           where o.id = due.id
           returning o.id::text, o.recipient, o.subject, o.body, o.attempts`,
    values: [batchSize],
    // In the same round trip, the service keeps the outbox bounded itself: no cron needed.
    following: [pruneFinishedMails],
    read: (rows) => rows,
  };
}

/**
 * Deletes up to 100 finished mails (which keep no body): sent ones after a
 * day, given-up ones after a week, so an operator can still look at them.
 */
const pruneFinishedMails: Statement = {
  text: `delete from app.mail_outbox
         where id in (
           select id from app.mail_outbox
           where (sent_at is not null or failed_at is not null)
             and coalesce(sent_at, failed_at) < now() - case when sent_at is not null then interval '1 day'
                                                             else interval '7 days' end
           order by coalesce(sent_at, failed_at)
           limit 100
         )`,
};

/** Marks mails delivered and clears their bodies, so no code outlives its delivery. */
export function markSent(ids: readonly string[]): Statement {
  return {
    text: "update app.mail_outbox set sent_at = now(), body = null, last_error = null where id = any($1::bigint[])",
    values: [ids],
  };
}

/**
 * Records a failed attempt; after the last allowed one the mail is given up:
 * marked failed and its body cleared.
 */
export function recordFailure(mail: OutboxMail, error: string): Statement {
  return {
    text: `update app.mail_outbox
           set last_error = $2,
               failed_at = case when $3 then now() end,
               body = case when $3 then null else body end
           where id = $1`,
    values: [mail.id, error, isLastAttempt(mail)],
  };
}
