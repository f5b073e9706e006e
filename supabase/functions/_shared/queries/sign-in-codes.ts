/**
 * SQL of signing in with a code sent by email: the endpoint queues a request
 * (`app.sign_in_code_requests`), the same insert for a known and an unknown
 * address; the mail drainers resolve it (`app.resolve_sign_in_code_requests`);
 * `app.sign_in_with_code` checks a code, as its HMAC, and the same statement
 * starts the session, so each request is one round trip.
 *
 * @example
 * ```ts
 * await withServiceTransaction(recordSignInCodeRequest(email), requireAddressLimit("verify-address", address, limits));
 * ```
 */
import type { SecurityLimits } from "../config/mod.ts";
import type { Query } from "../db/transactions.ts";
import { type Account, type AccountRow, toAccount } from "./account-rows.ts";
import { grantOf, type NewSession, type SessionColumns, type SessionGrant, sessionValues } from "./sessions.ts";

/** Wrong codes per address (the email) in `signInCodeWindowSeconds`, however many codes were asked for. */
export const signInCodeMaxWrong = 10;
export const signInCodeWindowSeconds = 3_600;

/** Queues a sign-in code request for `email`. */
export function recordSignInCodeRequest(email: string): Query<unknown, void> {
  return {
    text: "insert into app.sign_in_code_requests (email) values ($1)",
    values: [email],
    read: () => undefined,
  };
}

/**
 * Resolves up to `codeHashes.length` of the oldest requests in one
 * transaction, each with the code (as its HMAC) and mail of its position.
 */
export function resolveSignInCodeRequests(
  input: {
    codeHashes: string[];
    mails: { subject: string; body: string }[];
    ttlMinutes: number;
    limits: Pick<SecurityLimits, "verificationMailMinIntervalSeconds" | "verificationMailsPerDay">;
    /** `OTP_SIGN_UP`: a request for an address no account holds gets a code that creates its account. */
    signUp: boolean;
  },
): Query<{ resolved: number }, number> {
  return {
    text: "select app.resolve_sign_in_code_requests($1, $2, $3, $4, $5, $6, $7) as resolved",
    values: [
      input.codeHashes,
      input.mails.map((mail) => mail.body),
      input.ttlMinutes,
      input.limits.verificationMailMinIntervalSeconds,
      input.limits.verificationMailsPerDay,
      input.mails[0]?.subject ?? "",
      input.signUp,
    ],
    read: ([row]) => row.resolved,
  };
}

/** The outcome of signing in with a code. */
export type CodeSignIn =
  | { kind: "throttled"; retryAfter: number }
  | { kind: "bad-code" }
  | { kind: "suspended" }
  | { kind: "signed-in" | "registered"; account: Account; session: SessionGrant };

/**
 * Signs in with a code, given as its HMAC (`app.sign_in_with_code`): a right
 * code is used up, marks the address verified (reclaiming an account whose
 * address was unproven) and starts a session; a wrong one counts against the
 * address, and that commits. With `signUp` (`OTP_SIGN_UP`), a right code for an
 * address no account holds creates its account, verified, named `name` (else
 * the address's local part), and starts its session (`registered`).
 */
export function signInWithCode(
  input: {
    email: string;
    codeHash: string;
    revokeRecentDays: number;
    session: NewSession;
    signUp: boolean;
    name: string | undefined;
  },
): Query<
  Partial<AccountRow & SessionColumns> & { outcome: CodeSignIn["kind"]; retry_after: number | null },
  CodeSignIn
> {
  return {
    text: `with signed as (
             select * from app.sign_in_with_code($1, $2, $3, $4, $5, $9, $8, $10, $11)
           ), started as (
             select s.* from signed
             cross join lateral app.start_session(signed.id, $6, $7, $8, $9, null, null, 'email_code') s
             where signed.outcome in ('signed-in', 'registered')
           )
           select signed.*, started.* from signed left join started on true`,
    values: [
      input.email,
      input.codeHash,
      signInCodeMaxWrong,
      signInCodeWindowSeconds,
      input.revokeRecentDays,
      ...sessionValues(input.session),
      input.signUp,
      input.name ?? null,
    ],
    read: ([row]) => {
      if (row.outcome === "signed-in" || row.outcome === "registered") {
        return { kind: row.outcome, account: toAccount(row as AccountRow), session: grantOf(row as SessionColumns) };
      }
      if (row.outcome === "throttled") return { kind: "throttled", retryAfter: row.retry_after ?? 1 };
      return { kind: row.outcome } as CodeSignIn;
    },
  };
}
