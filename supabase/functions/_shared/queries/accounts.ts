/**
 * SQL of the account tables (`app.users`, `app.password_reset_codes`,
 * `app.mail_outbox`), one statement per step. Run as the connection's own
 * role: these tables are not exposed to `anon` or `authenticated`. Passwords
 * are hashed and checked in the function (`auth/passwords.ts`), never in
 * Postgres; these statements carry only hashes. What a mailed code proves is
 * in `email-proofs.ts`.
 *
 * Login and register start the account's session in the same statement that
 * proves the password (or creates the account), so signing in still costs
 * what it did before sessions existed.
 */
import type { SecurityLimits } from "../config/mod.ts";
import { reserveLoginAttempt, reservePasswordReentry, type TrustedDevice } from "./rate-limits.ts";
import type { Query } from "../db/transactions.ts";
import { type Account, accountColumns, type AccountRow, toAccount } from "./account-rows.ts";
import {
  grantOf,
  type NewSession,
  type SessionColumns,
  type SessionGrant,
  sessionValues,
  startSessionCall,
} from "./sessions.ts";

/** An account that has just signed in, and its new session. */
export interface SignedInAccount {
  account: Account;
  session: SessionGrant;
}

/** A verification code to store (as its HMAC) and the mail that carries it. */
export interface NewVerificationCode {
  codeHash: string;
  ttlHours: number;
  attempts: number;
  mail: { subject: string; body: string };
}

/**
 * Inserts a user with `passwordHash`, starts its first session, and stores a
 * verification code and queues its mail. Fails with 23505 when the email is
 * taken.
 */
export function insertUser(
  input: {
    name: string;
    email: string;
    passwordHash: string;
    session: NewSession;
    verification: NewVerificationCode;
  },
): Query<AccountRow & SessionColumns, SignedInAccount> {
  const { verification } = input;
  return {
    text: `with account as (
             insert into app.users (name, email, password_hash) values ($1, $2, $3)
             returning ${accountColumns}
           ), started as (
             select s.* from account cross join lateral ${startSessionCall("account.id", 4)} s
           ), code as (
             insert into app.email_verification_codes (user_id, code_hash, expires_at, attempts_left)
             select id, $8, now() + make_interval(hours => $9), $10 from account
           ), mail as (
             insert into app.mail_outbox (recipient, subject, body) select email, $11, $12 from account
           )
           select account.*, started.* from account, started`,
    values: [
      input.name,
      input.email,
      input.passwordHash,
      ...sessionValues(input.session),
      verification.codeHash,
      verification.ttlHours,
      verification.attempts,
      verification.mail.subject,
      verification.mail.body,
    ],
    read: ([row]) => ({ account: toAccount(row), session: grantOf(row) }),
  };
}

/** What an attempt to prove the password found before the password is checked. */
export interface PasswordAttempt {
  /** Seconds until the limits allow an attempt, or 0 when this one was counted and may go on. */
  retryAfter: number;
  /** The account with the email, and its hash; undefined for an unknown email. */
  account: Account | undefined;
  passwordHash: string | undefined;
}

/** `reserve`, then the account with `email` and its hash, in the same round trip. */
function withAccountOf(
  email: string,
  reserve: Query<{ retry_after: number }, number>,
): Query<{ retry_after: number }, PasswordAttempt> {
  return {
    ...reserve,
    following: [{
      text: `select ${accountColumns}, password_hash from app.users where email = $1`,
      values: [email],
    }],
    read: ([reserved], [row]) => {
      const found = row as (AccountRow & { password_hash: string }) | undefined;
      return {
        retryAfter: reserved.retry_after,
        account: found ? toAccount(found) : undefined,
        passwordHash: found?.password_hash,
      };
    },
  };
}

/**
 * Counts an attempt to prove the password of the account with `email` (a
 * login, or a verification with the password) against the login limits, and
 * reads the account and its hash, in one round trip that commits before the
 * password is checked, so concurrent guesses each see the others.
 */
export function passwordAttempt(
  input: Parameters<typeof reserveLoginAttempt>[0],
): Query<{ retry_after: number }, PasswordAttempt> {
  return withAccountOf(input.email, reserveLoginAttempt(input));
}

/**
 * Counts a password re-entered by a signed-in caller against its session's
 * own limit (the account's cap, which strangers can fill, does not apply), and
 * reads the account and its hash, in one round trip.
 */
export function passwordReentry(
  input: { email: string; sessionId: string; limits: SecurityLimits },
): Query<{ retry_after: number }, PasswordAttempt> {
  return withAccountOf(input.email, reservePasswordReentry(input.sessionId, input.limits));
}

/**
 * Completes a login whose password matched `passwordHash`: unless the hash or
 * the status changed meanwhile, it wipes the failed logins of the email from
 * `address` (its owner starts afresh there), takes the attempt back from the
 * account's count, and starts the session. Undefined when it did not.
 */
export function completeLogin(
  input: {
    userId: string;
    passwordHash: string;
    address: string | undefined;
    device?: TrustedDevice;
    session: NewSession;
  },
): Query<AccountRow & SessionColumns, SignedInAccount | undefined> {
  return {
    text: `with account as (
             select ${accountColumns}, device_generation from app.users
             where id = $1 and password_hash = $2 and status = 'ACTIVE'
           ), cleared as (
             delete from app.rate_limits r using account
             where r.bucket = 'login-failure' and r.key = account.email || ' ' || $3
           ), uncounted as (
             -- A success is no guess: it takes its own attempt back from the account's count, and from the
             -- device's when the device token is this account's, of its current generation (another account's
             -- success must not give a device token back the guesses it spent here).
             update app.rate_limits r set hits = greatest(r.hits - 1, 0) from account
             where (r.bucket = 'login-account' and r.key = account.email)
                or (r.bucket = 'login-device' and r.key = $8 and account.id = $9::uuid
                    and account.device_generation = $10::integer)
           ), started as (
             select s.* from account cross join lateral ${startSessionCall("account.id", 4)} s
           ), recorded as (
             select app.record_security_event('login_succeeded', account.id, account.id, $3, $6,
                                              jsonb_build_object('sessionId', started.session_id))
             from account, started
           )
           select account.*, started.* from account, started, recorded`,
    values: [
      input.userId,
      input.passwordHash,
      input.address ?? null,
      ...sessionValues(input.session),
      input.device?.key ?? null,
      input.device?.userId ?? null,
      input.device?.generation ?? null,
    ],
    read: ([row]) => row ? { account: toAccount(row), session: grantOf(row) } : undefined,
  };
}

/**
 * Records a failed login of the account with `email` on its security log
 * (nothing for an unknown email). Login sends it after its answer, so the
 * write cannot tell a known email from an unknown one by the answer's timing.
 */
export function recordLoginFailure(
  input: { email: string; address: string | undefined; userAgent: string | undefined; details: Record<string, string> },
): Query<unknown, void> {
  return {
    text: `select app.record_security_event('login_failed', u.id, u.id, $2, $3, $4::jsonb)
           from app.users u where u.email = $1`,
    values: [input.email, input.address ?? null, input.userAgent ?? null, JSON.stringify(input.details)],
    read: () => undefined,
  };
}

/** The outcome of a password change: `stale` when the password changed since it was checked. */
export type PasswordChange =
  | { kind: "stale" }
  | { kind: "changed"; account: Account; session: SessionGrant };

/**
 * Sets `newHash` as the password when the stored hash is still `expectedHash`,
 * the one the current password was checked against (`app.change_password`),
 * which ends every session of the account; then starts the caller's new one
 * and clears the email's failed logins from `address`, as a login would (the
 * re-entered password counted against the session, never the account's cap).
 * The new session has the level of the caller's (`callerSessionId`): a caller
 * who made the second step keeps it.
 */
export function changePassword(
  input: {
    userId: string;
    callerSessionId: string;
    /** Undefined: no password was given, which Postgres accepts only from a fresh provider sign-in. */
    expectedHash: string | undefined;
    newHash: string;
    address: string | undefined;
    session: NewSession;
  },
): Query<Partial<AccountRow & SessionColumns> & { outcome: PasswordChange["kind"] }, PasswordChange> {
  return {
    text: `with changed as (
             select * from app.change_password($1, $2, $3)
           ), started as (
             select s.* from changed cross join lateral ${
      startSessionCall("changed.id", 5, { inheritFrom: "$9::uuid" })
    } s
             where changed.outcome = 'changed'
           ), cleared as (
             delete from app.rate_limits r using changed
             where changed.outcome = 'changed' and r.bucket = 'login-failure' and r.key = changed.email || ' ' || $4
           )
           select changed.*, started.* from changed left join started on true`,
    values: [
      input.userId,
      input.expectedHash ?? null,
      input.newHash,
      input.address ?? null,
      ...sessionValues(input.session),
      input.callerSessionId,
    ],
    read: ([row]) =>
      row.outcome === "changed"
        ? { kind: "changed", account: toAccount(row as AccountRow), session: grantOf(row as SessionColumns) }
        : { kind: row.outcome },
  };
}

/**
 * Deletes the account and everything that holds its id or address while its
 * stored hash is still `expectedHash`, the one the password was checked
 * against (`app.delete_account`); answers whether it did.
 */
export function deleteAccount(
  input: { userId: string; expectedHash: string | undefined },
): Query<{ deleted: boolean }, boolean> {
  return {
    text: "select app.delete_account($1, $2) as deleted",
    values: [input.userId, input.expectedHash ?? null],
    read: ([row]) => row.deleted,
  };
}
