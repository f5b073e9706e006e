/**
 * Resolves queued reset requests, after their answers have gone: each email
 * gets a fresh code and its mail through `app.request_password_reset` (which
 * does nothing for an unknown email or a used-up mail quota). The drainers run
 * it before they claim mails, so a code is mailed in the same drain.
 *
 * @example
 * ```ts
 * await resolveQueuedResetRequests();
 * ```
 */
import { getConfig } from "../config/mod.ts";
import { withServiceTransaction } from "../db/transactions.ts";
import { resolveResetRequests } from "../queries/reset-requests.ts";
import { generateCode, resetCodeHash, resetCodeMail, resetCodePolicy } from "../auth/one-time-codes.ts";

/** Resolves up to `batchSize` of the oldest requests; answers how many there were. */
export async function resolveQueuedResetRequests(batchSize = 20): Promise<number> {
  const { jwtSecret, limits } = getConfig();
  // A code per request that may be taken; those left over are never stored or sent.
  const codes = Array.from({ length: batchSize }, generateCode);
  return await withServiceTransaction(resolveResetRequests({
    codeHashes: await Promise.all(codes.map((code) => resetCodeHash(jwtSecret, code))),
    mails: codes.map(resetCodeMail),
    ...resetCodePolicy,
    minIntervalSeconds: limits.resetMailMinIntervalSeconds,
    mailsPerHour: limits.resetMailsPerHour,
  }));
}
