/**
 * The local stack's mail loop: drains `app.mail_outbox` with the same
 * dispatcher as the deployed functions, and prints each delivered mail with
 * its recipient, which is how a developer reads a reset code locally. With a
 * provider configured (RESEND_API_KEY, MAIL_FROM) it also delivers through
 * it, retries included; without one, printing is the delivery.
 */
import {
  type DeliverMail,
  dispatchDueMail,
  mailQueuedEvent,
  providerDelivery,
} from "../supabase/functions/_shared/mail/dispatch.ts";

const printMail: DeliverMail = (mail) => {
  console.log(`[mail] to=${mail.recipient} subject="${mail.subject}" body="${mail.body}"`);
  return Promise.resolve();
};

/**
 * Drains the outbox at once whenever a function says it queued mail (`mailQueuedEvent`), and otherwise every
 * `intervalMs`, for retries that come due and the schedule's sweeps. An idle stack then costs one drain every
 * `intervalMs` instead of several a second, while a code still reaches the console within moments of its request.
 * Returns a function that stops the loop.
 */
export function startLocalMail(intervalMs = 2_000): () => Promise<void> {
  const provider = providerDelivery();
  const deliver: DeliverMail = provider ? (mail) => provider(mail).then(() => printMail(mail)) : printMail;
  let stopped = false;
  // Set by a queued mail, also while a drain runs, so a mail queued during one is drained right after it.
  let queued = false;
  let wake: (() => void) | undefined;
  const onQueued = () => {
    queued = true;
    wake?.();
  };
  globalThis.addEventListener(mailQueuedEvent, onQueued);
  const loop = (async () => {
    while (!stopped) {
      queued = false;
      try {
        await dispatchDueMail(deliver);
      } catch (error) {
        console.error(`[mail] outbox not drained: ${error instanceof Error ? error.message : error}`);
      }
      if (queued || stopped) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, intervalMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  })();
  return async () => {
    stopped = true;
    globalThis.removeEventListener(mailQueuedEvent, onQueued);
    wake?.();
    await loop;
  };
}
