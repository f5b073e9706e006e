/**
 * SQL of the reset-request queue (`app.password_reset_requests`): the endpoint
 * records a request, the same insert for a known and an unknown email, and a
 * mail drainer later resolves each (`app.request_password_reset`), so the
 * answer's timing says nothing about which emails have accounts.
 *
 * @example
 * ```ts
 * await withServiceTransaction(recordResetRequest(email), requireAddressLimit("reset-request-address", address, limits));
 * ```
 */
import type { Query } from "../db/transactions.ts";

/** Queues a reset request for `email`. */
export function recordResetRequest(email: string): Query<unknown, void> {
  return {
    text: "insert into app.password_reset_requests (email) values ($1)",
    values: [email],
    read: () => undefined,
  };
}

/**
 * Resolves up to `codeHashes.length` of the oldest requests in one
 * transaction, each with the code (as its HMAC) and mail of its position
 * (`app.resolve_password_reset_requests`).
 */
export function resolveResetRequests(
  input: {
    codeHashes: string[];
    mails: { subject: string; body: string }[];
    ttlMinutes: number;
    attempts: number;
    minIntervalSeconds: number;
    mailsPerHour: number;
  },
): Query<{ resolved: number }, number> {
  return {
    text: "select app.resolve_password_reset_requests($1, $2, $3, $4, $5, $6, $7) as resolved",
    values: [
      input.codeHashes,
      input.mails.map((mail) => mail.body),
      input.ttlMinutes,
      input.attempts,
      input.minIntervalSeconds,
      input.mailsPerHour,
      input.mails[0]?.subject ?? "",
    ],
    read: ([row]) => row.resolved,
  };
}
