/**
 * SQL of what a mailed code proves: setting a password with a reset code,
 * verifying an address, and sending a new verification code. The code is
 * checked as its HMAC in the same statement that acts on it and starts the
 * session, so each costs one round trip. Run as the connection's own role.
 */
import type { SecurityLimits } from "../config/mod.ts";
import type { Query } from "../db/transactions.ts";
import { type Account, type AccountRow, toAccount } from "./account-rows.ts";
import type { NewVerificationCode } from "./accounts.ts";
import {
  grantOf,
  type NewSession,
  type SessionColumns,
  type SessionGrant,
  sessionValues,
  startSessionCall,
} from "./sessions.ts";

/** The outcome of setting a password with a reset code. */
export type PasswordReset =
  | { kind: "unknown-user" }
  | { kind: "throttled"; retryAfter: number }
  | { kind: "bad-code" }
  | { kind: "suspended" }
  | { kind: "updated"; account: Account; session: SessionGrant };

/**
 * Sets a new password with a reset code, given as its HMAC
 * (`app.reset_password`): a valid code is consumed, a wrong one uses up an
 * attempt (and that commits), and the account is marked verified, its
 * sessions, refresh tokens and device tokens revoked, what was added without
 * the mailbox removed (`app.reclaim_account`), and a new session started.
 */
export function resetPassword(
  input: {
    email: string;
    codeHash: string;
    passwordHash: string;
    limits: Pick<
      SecurityLimits,
      "resetCodeMaxWrongPerAccount" | "resetCodeAccountWindowSeconds"
    >;
    /** `RESET_REVOKES_RECENT_DAYS`: identities linked this recently go with the reset. */
    revokeRecentDays: number;
    session: NewSession;
  },
): Query<
  Partial<AccountRow & SessionColumns> & { outcome: PasswordReset["kind"]; retry_after: number | null },
  PasswordReset
> {
  return {
    // The reset revokes the account's sessions (trigger users_end_sessions) before the new one starts.
    text: `with reset as (
             select * from app.reset_password($1, $2, $3, $4, $5, $6, $10, $9)
           ), started as (
             select s.* from reset cross join lateral ${startSessionCall("reset.id", 7)} s
             where reset.outcome = 'updated'
           ), lifted as (
             -- The owner proved the mailbox, as for the failures per address: the account's cap is lifted too.
             delete from app.rate_limits r using reset
             where reset.outcome = 'updated' and r.bucket = 'login-account' and r.key = reset.email
           )
           select reset.*, started.* from reset left join started on true`,
    values: [
      input.email,
      input.codeHash,
      input.passwordHash,
      input.limits.resetCodeMaxWrongPerAccount,
      input.limits.resetCodeAccountWindowSeconds,
      input.revokeRecentDays,
      ...sessionValues(input.session),
    ],
    read: ([row]) => {
      if (row.outcome === "updated") {
        return { kind: "updated", account: toAccount(row as AccountRow), session: grantOf(row as SessionColumns) };
      }
      if (row.outcome === "throttled") return { kind: "throttled", retryAfter: row.retry_after ?? 1 };
      return { kind: row.outcome } as PasswordReset;
    },
  };
}

/** The outcome of verifying an address with its code: `unproven` when the request did not prove the account. */
export type EmailVerification =
  | { kind: "unproven" }
  | { kind: "bad-code" }
  | { kind: "suspended" }
  | { kind: "verified"; account: Account; session: SessionGrant };

/**
 * Verifies the address with the HMAC of the code presented
 * (`app.verify_email`), for a request that proved the account: its session's
 * user (`provenUserId`) or the hash its password was checked against
 * (`provenPasswordHash`). A right code marks the account verified and starts a
 * session; a wrong one uses up an attempt (and that commits); an unproven
 * request changes nothing. A right password is no guess: as after a login, it
 * clears the email's failures from the address and takes its attempt back from
 * the account's count.
 */
export function verifyEmail(
  input: { email: string; codeHash: string; provenUserId?: string; provenPasswordHash?: string; session: NewSession },
): Query<Partial<AccountRow & SessionColumns> & { outcome: EmailVerification["kind"] }, EmailVerification> {
  return {
    text: `with verified as (
             select * from app.verify_email($1, $2, $3, $4)
           ), started as (
             select s.* from verified cross join lateral ${startSessionCall("verified.id", 5)} s
             where verified.outcome = 'verified'
           ), cleared as (
             delete from app.rate_limits r
             where $4::text is not null and r.bucket = 'login-failure' and r.key = $1 || ' ' || $8
           ), uncounted as (
             update app.rate_limits r set hits = greatest(r.hits - 1, 0)
             where $4::text is not null and r.bucket = 'login-account' and r.key = $1
           )
           select verified.*, started.* from verified left join started on true`,
    values: [
      input.email,
      input.codeHash,
      input.provenUserId ?? null,
      input.provenPasswordHash ?? null,
      ...sessionValues(input.session),
    ],
    read: ([row]) =>
      row.outcome === "verified"
        ? { kind: "verified", account: toAccount(row as AccountRow), session: grantOf(row as SessionColumns) }
        : { kind: row.outcome },
  };
}

/**
 * Mails a new verification code to an unverified account, within its mail
 * quota (`app.resend_verification`); nothing for a verified or unknown address.
 */
export function resendVerification(
  input: {
    email: string;
    verification: NewVerificationCode;
    limits: Pick<SecurityLimits, "verificationMailMinIntervalSeconds" | "verificationMailsPerDay">;
  },
): Query<unknown, void> {
  const { email, verification, limits } = input;
  return {
    text: "select app.resend_verification($1, $2, $3, $4, $5, $6, $7, $8)",
    values: [
      email,
      verification.codeHash,
      verification.ttlHours,
      verification.attempts,
      limits.verificationMailMinIntervalSeconds,
      limits.verificationMailsPerDay,
      verification.mail.subject,
      verification.mail.body,
    ],
    read: () => undefined,
  };
}
