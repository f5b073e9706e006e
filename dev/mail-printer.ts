/**
 * The local stack's mail sender: drains `app.mail_outbox` and prints each mail
 * with its recipient, which is how a developer reads a reset code locally.
 * Delivered mails have their body cleared, as a real sender would.
 */
import type { Sql } from "../supabase/functions/_shared/db.ts";

interface OutboxMail {
  recipient: string;
  subject: string;
  body: string;
}

/** Marks up to `batchSize` unsent mails delivered and returns them. */
export async function takeUnsentMail(sql: Sql, batchSize = 20): Promise<OutboxMail[]> {
  return await sql<OutboxMail[]>`
    with batch as (
      select id, recipient, subject, body from app.mail_outbox
      where sent_at is null order by id limit ${batchSize}
      for update skip locked
    ), delivered as (
      update app.mail_outbox o set sent_at = now(), body = null from batch where o.id = batch.id
    )
    select recipient, subject, body from batch order by id`;
}

/** Polls the outbox every `intervalMs` and prints each mail; returns a function that stops it. */
export function startMailPrinter(sql: Sql, intervalMs = 250): () => Promise<void> {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        for (const mail of await takeUnsentMail(sql)) {
          console.log(`[mail] to=${mail.recipient} subject="${mail.subject}" body="${mail.body}"`);
        }
      } catch (error) {
        console.error(`[mail] outbox not drained: ${error instanceof Error ? error.message : error}`);
      }
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}
