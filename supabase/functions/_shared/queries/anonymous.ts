/**
 * SQL of anonymous accounts (`app.users.is_anonymous`): starting one with its
 * first session, and upgrading it to an account with an email and a password
 * under the same id, so its notes stay where they are. Run as the
 * connection's own role; the note cap and the refusal of factors and passkeys
 * live in Postgres (migration 20261128000800).
 *
 * @example
 * ```ts
 * const { account, session } = await withServiceTransaction(insertAnonymousUser(newSession));
 * ```
 */
import type { Query, Statement } from "../db/transactions.ts";
import { accountColumns, type AccountRow, toAccount } from "./account-rows.ts";
import type { NewVerificationCode, SignedInAccount } from "./accounts.ts";
import { grantOf, type NewSession, type SessionColumns, sessionValues, startSessionCall } from "./sessions.ts";

/** The name an anonymous account carries until it signs up (the column requires one). */
export const anonymousName = "Anonymous";

/** Inserts an anonymous account (no email, no password) and starts its first session. */
export function insertAnonymousUser(session: NewSession): Query<AccountRow & SessionColumns, SignedInAccount> {
  return {
    text: `with account as (
             insert into app.users (name, is_anonymous) values ($5, true)
             returning ${accountColumns}
           ), started as (
             select s.* from account cross join lateral ${startSessionCall("account.id", 1)} s
           )
           select account.*, started.* from account, started`,
    values: [...sessionValues(session), anonymousName],
    read: ([row]) => ({ account: toAccount(row), session: grantOf(row) }),
  };
}

/**
 * Gives the caller's anonymous account a name, an email and a password hash
 * (clearing `is_anonymous`), stores a verification code and queues its mail,
 * and starts a session that takes the caller's session's level; the caller's
 * own session goes on too. Undefined when the account is not anonymous (any
 * more). Fails with 23505, changing nothing, when the email is taken.
 */
export function upgradeAnonymous(
  input: {
    userId: string;
    callerSessionId: string;
    name: string;
    email: string;
    passwordHash: string;
    session: NewSession;
    verification: NewVerificationCode;
  },
): Query<AccountRow & SessionColumns, SignedInAccount | undefined> {
  const { verification } = input;
  return {
    text: `with account as (
             update app.users set name = $2, email = $3, password_hash = $4, is_anonymous = false, updated_at = now()
             where id = $1 and is_anonymous
             returning ${accountColumns}
           ), started as (
             select s.* from account cross join lateral ${
      startSessionCall("account.id", 5, { inheritFrom: "$9::uuid" })
    } s
           ), code as (
             insert into app.email_verification_codes (user_id, code_hash, expires_at, attempts_left)
             select id, $10, now() + make_interval(hours => $11), $12 from account
           ), mail as (
             insert into app.mail_outbox (recipient, subject, body) select email, $13, $14 from account
           )
           select account.*, started.* from account, started`,
    values: [
      input.userId,
      input.name,
      input.email,
      input.passwordHash,
      ...sessionValues(input.session),
      input.callerSessionId,
      verification.codeHash,
      verification.ttlHours,
      verification.attempts,
      verification.mail.subject,
      verification.mail.body,
    ],
    read: ([row]) => row ? { account: toAccount(row), session: grantOf(row) } : undefined,
  };
}

/**
 * Deletes up to 1,000 anonymous accounts unused for `ttlDays` (no session
 * started or refreshed since), with their notes. Run by the mail drain, the
 * service's one schedule.
 */
export function deleteUnusedAnonymousAccounts(ttlDays: number): Statement {
  return { text: "select app.delete_unused_anonymous_accounts($1, 1000)", values: [ttlDays] };
}

/** What a merge did: moved `moved` notes, or found the anonymous account gone (a retry), or refused. */
export type MergeOutcome = "merged" | "gone" | "not_anonymous" | "target_anonymous" | "revoked";

/**
 * Moves every note of the anonymous account whose live session `anonymous`
 * names to the caller's account and deletes the anonymous account, in one
 * statement (`app.merge_anonymous_account`).
 */
export function mergeAnonymous(
  input: { target: string; anonymous: { sub: string; sessionId: string; tokenVersion: number } },
): Query<{ outcome: MergeOutcome; moved: number }, { outcome: MergeOutcome; moved: number }> {
  const { target, anonymous } = input;
  return {
    text: "select * from app.merge_anonymous_account($1, $2, $3, $4)",
    values: [target, anonymous.sub, anonymous.sessionId, anonymous.tokenVersion],
    read: ([row]) => ({ outcome: row.outcome, moved: Number(row.moved) }),
  };
}
