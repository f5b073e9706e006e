/**
 * Resolves queued reset (and sign-in code) requests, after their answers have gone: each email
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
import { resolveSignInCodeRequests } from "../queries/sign-in-codes.ts";
import {
  generateCode,
  generateSignInCode,
  resetCodeHash,
  resetCodeMail,
  resetCodePolicy,
  signInCodeHash,
  signInCodeMail,
  signInCodePolicy,
} from "../auth/one-time-codes.ts";

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

/** Resolves up to `batchSize` of the oldest sign-in code requests, as reset requests are; answers how many. */
export async function resolveQueuedSignInCodeRequests(batchSize = 20): Promise<number> {
  const { jwtSecret, limits, otpSignUp } = getConfig();
  const codes = Array.from({ length: batchSize }, generateSignInCode);
  return await withServiceTransaction(resolveSignInCodeRequests({
    codeHashes: await Promise.all(codes.map((code) => signInCodeHash(jwtSecret, code))),
    mails: codes.map(signInCodeMail),
    ttlMinutes: signInCodePolicy.ttlMinutes,
    limits,
    signUp: otpSignUp,
  }));
}

/** Resolves both queues: reset requests, then sign-in code requests. */
export async function resolveQueuedCodeRequests(batchSize = 20): Promise<void> {
  await resolveQueuedResetRequests(batchSize);
  await resolveQueuedSignInCodeRequests(batchSize);
}
