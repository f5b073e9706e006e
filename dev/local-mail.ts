/**
 * The local stack's mail loop: drains `app.mail_outbox` with the same
 * dispatcher as the deployed functions, and prints each delivered mail with
 * its recipient, which is how a developer reads a reset code locally. With a
 * provider configured (RESEND_API_KEY, MAIL_FROM) it also delivers through
 * it, retries included; without one, printing is the delivery.
 */
import { type DeliverMail, dispatchDueMail, providerDelivery } from "../supabase/functions/_shared/mail/dispatch.ts";

const printMail: DeliverMail = (mail) => {
  console.log(`[mail] to=${mail.recipient} subject="${mail.subject}" body="${mail.body}"`);
  return Promise.resolve();
};

/** Drains the outbox every `intervalMs`; returns a function that stops the loop. */
export function startLocalMail(intervalMs = 250): () => Promise<void> {
  const provider = providerDelivery();
  const deliver: DeliverMail = provider ? (mail) => provider(mail).then(() => printMail(mail)) : printMail;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        await dispatchDueMail(deliver);
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
