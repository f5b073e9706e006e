/**
 * Drains the mail outbox: claims the due mails, delivers each, and records
 * what happened, so a mail is sent once, retried with backoff while its
 * delivery fails, and given up after its last attempt (`isLastAttempt`). Run by the
 * `mail-dispatch` function (called by Supabase Cron every minute), in the
 * background after a reset request, and by the local stack's mail loop.
 *
 * @example
 * ```ts
 * const outcome = await dispatchDueMail((mail) => sendWithResend(provider, mail));
 * ```
 */
import { edgeRuntimeWaitUntil } from "../http/after-response.ts";
import { getConfig } from "../config/mod.ts";
import { runTransaction, type Statement, withServiceTransaction } from "../db/transactions.ts";
import { claimDueMails, isLastAttempt, markSent, type OutboxMail, recordFailure } from "./outbox.ts";
import { resolveQueuedCodeRequests } from "./reset-requests.ts";
import { sendWithResend } from "./resend.ts";
import { pruneExpiredTombstones } from "../queries/note-changes.ts";
import { pruneExpiredCreateKeys } from "../queries/notes.ts";
import { pruneSecurityEvents } from "../queries/security-events.ts";
import { deleteUnusedAnonymousAccounts } from "../queries/anonymous.ts";

/** Delivers one mail, or throws. */
export type DeliverMail = (mail: OutboxMail) => Promise<void>;

/** What one drain did. */
export interface DispatchOutcome {
  sent: number;
  /** Failed this time; due again after the backoff. */
  retrying: number;
  /** Failed for the last allowed time; given up. */
  failed: number;
}

/**
 * Resolves queued reset and sign-in code requests into mails, then claims up to `batchSize` due
 * mails, delivers them concurrently and records each outcome.
 */
export async function dispatchDueMail(deliver: DeliverMail, batchSize = 20): Promise<DispatchOutcome> {
  await resolveQueuedCodeRequests(batchSize);
  const claim = claimDueMails(batchSize);
  // The drain is the service's schedule, so it also prunes expired create keys, tombstones and security events
  // past their retention, and deletes anonymous accounts left unused, in the same round trip.
  const mails = await withServiceTransaction({
    ...claim,
    following: [
      ...(claim.following ?? []),
      pruneExpiredCreateKeys,
      pruneSecurityEvents(getConfig().auditRetentionDays),
      pruneExpiredTombstones(getConfig().tombstoneDays),
      deleteUnusedAnonymousAccounts(getConfig().anonymousTtlDays),
    ],
  });
  const outcome: DispatchOutcome = { sent: 0, retrying: 0, failed: 0 };
  if (mails.length === 0) return outcome;
  const results = await Promise.allSettled(mails.map((mail) => deliver(mail)));
  const sentIds: string[] = [];
  const failures: Statement[] = [];
  results.forEach((result, index) => {
    const mail = mails[index];
    if (result.status === "fulfilled") {
      sentIds.push(mail.id);
      outcome.sent++;
      return;
    }
    const error = result.reason instanceof Error ? result.reason.message : String(result.reason);
    const givenUp = isLastAttempt(mail);
    if (givenUp) outcome.failed++;
    else outcome.retrying++;
    failures.push(recordFailure(mail, error));
    // The mail's id and attempt say which one; its recipient and body, which carry a code, stay out of logs.
    console.error(JSON.stringify({
      level: givenUp ? "error" : "warn",
      event: givenUp ? "mail given up" : "mail delivery failed; will retry",
      mailId: mail.id,
      attempt: mail.attempts,
      error,
    }));
  });
  await runTransaction([...(sentIds.length > 0 ? [markSent(sentIds)] : []), ...failures]);
  return outcome;
}

/** The hosted delivery: through the configured provider, or undefined when none is configured. */
export function providerDelivery(): DeliverMail | undefined {
  const provider = getConfig().mail;
  return provider && ((mail) => sendWithResend(provider, mail));
}

/** The event `dispatchAfterResponse` sends on `globalThis` where a drainer of the process's own drains the outbox. */
export const mailQueuedEvent = "notes-service:mail-queued";

/**
 * On Supabase's edge runtime, drains the outbox after the response has been
 * sent (`EdgeRuntime.waitUntil`), so a mail goes out within moments without
 * delaying the answer. Without a provider it still turns queued reset requests
 * into codes and queued mails. Elsewhere (the local stack, whose mail loop
 * drains the outbox) it tells that loop that mail is queued, so the loop can
 * poll slowly and still deliver at once.
 */
export function dispatchAfterResponse(): void {
  const waitUntil = edgeRuntimeWaitUntil();
  if (!waitUntil) {
    globalThis.dispatchEvent(new Event(mailQueuedEvent));
    return;
  }
  const deliver = providerDelivery();
  waitUntil(
    (deliver ? dispatchDueMail(deliver) : resolveQueuedCodeRequests()).catch((error) =>
      console.error(JSON.stringify({ level: "warn", event: "mail dispatch failed", error: String(error) }))
    ),
  );
}
