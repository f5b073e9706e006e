/**
 * SQL of the account tables (`app.users`, `app.password_reset_codes`,
 * `app.mail_outbox`), one statement per step. Run as the connection's own
 * role: these tables are not exposed to `anon` or `authenticated`. Passwords
 * and codes are hashed by pgcrypto inside Postgres and never leave it in the
 * clear.
 */
import type { SecurityLimits } from "../config.ts";
import type { User } from "../contract.ts";
import type { Query } from "../db.ts";

/** A row of `app.users` as these statements return it: never the password hash. */
interface AccountRow {
  id: string;
  name: string;
  phone_number: string | null;
  email: string;
  role: User["role"];
  status: User["status"];
  is_verified: boolean;
  created_at: Date;
  updated_at: Date;
  token_version: number;
}

const accountColumnNames = [
  "id",
  "name",
  "phone_number",
  "email",
  "role",
  "status",
  "is_verified",
  "created_at",
  "updated_at",
  "token_version",
] as const satisfies readonly (keyof AccountRow)[];

/** The columns an `AccountRow` is read from; built once, not per request. */
const accountColumns = accountColumnNames.join(", ");
/** The same columns of `app.users u`, for the login query's join. */
const userAccountColumns = accountColumnNames.map((column) => `u.${column}`).join(", ");

/** A user and the token version its access tokens must carry (see `app.users.token_version`). */
export interface Account {
  user: User;
  tokenVersion: number;
}

function toAccount(row: AccountRow): Account {
  return {
    user: {
      id: row.id,
      name: row.name,
      phoneNumber: row.phone_number,
      email: row.email,
      role: row.role,
      status: row.status,
      isVerified: row.is_verified,
      createdAt: row.created_at.toISOString(),
      updatedAt: row.updated_at.toISOString(),
    },
    tokenVersion: row.token_version,
  };
}

/**
 * Inserts a user with a bcrypt hash of `password`. Fails with 23505 when the
 * email is taken; then no hash is computed, so repeated registers of a taken
 * email cost no bcrypt work.
 */
export function insertUser(
  input: { name: string; email: string; password: string; bcryptCost: number },
): Query<AccountRow, Account> {
  return {
    text: `insert into app.users (name, email, password_hash)
           values ($1, $2, case when exists (select from app.users where email = $2) then ''
                                else extensions.crypt($3, extensions.gen_salt('bf', $4)) end)
           returning ${accountColumns}`,
    values: [input.name, input.email, input.password, input.bcryptCost],
    read: ([row]) => toAccount(row),
  };
}

/** What a login's password check found. */
export interface CredentialCheck {
  account: Account;
  passwordMatches: boolean;
}

/**
 * The user with `email` and whether `password` matches. For an unknown email
 * it still hashes the password once at the same cost, so the answer takes as
 * long as for a wrong password. When the password matches an ACTIVE account,
 * the same statement wipes the failed logins of the email from `address`, so
 * its owner starts afresh there.
 */
export function checkCredentials(
  input: { email: string; password: string; bcryptCost: number; address: string | undefined },
): Query<Partial<AccountRow> & { password_matches: boolean }, CredentialCheck | undefined> {
  return {
    text: `with checked as (
             select ${userAccountColumns},
                    coalesce(u.password_hash = extensions.crypt($2, probe.salt), false) as password_matches
             from (select coalesce(
                     (select password_hash from app.users where email = $1),
                     extensions.gen_salt('bf', $3)) as salt) as probe
             left join app.users u on u.email = $1
           ), cleared as (
             delete from app.rate_limits
             where bucket = 'login-failure' and key = $1 || ' ' || $4
               and exists (select from checked where password_matches and status = 'ACTIVE')
           )
           select * from checked`,
    values: [input.email, input.password, input.bcryptCost, input.address ?? null],
    read: ([row]) =>
      row?.id ? { account: toAccount(row as AccountRow), passwordMatches: row.password_matches } : undefined,
  };
}

/** What a reset request needs to store a code and queue its mail. */
export interface ResetRequest {
  email: string;
  code: string;
  ttlMinutes: number;
  attempts: number;
  minIntervalSeconds: number;
  mailsPerHour: number;
  mail: { subject: string; body: string };
}

/**
 * Stores a new reset code for the account with `email`, replacing the last
 * one, and queues its mail, unless the email is unknown or the account's
 * reset-mail quota is used up (`app.request_password_reset`).
 */
export function requestPasswordReset(request: ResetRequest): Query<unknown, void> {
  return {
    text: "select app.request_password_reset($1, $2, $3, $4, $5, $6, $7, $8)",
    values: [
      request.email,
      request.code,
      request.ttlMinutes,
      request.attempts,
      request.minIntervalSeconds,
      request.mailsPerHour,
      request.mail.subject,
      request.mail.body,
    ],
    read: () => undefined,
  };
}

/** The outcome of setting a password with a reset code. */
export type PasswordReset =
  | { kind: "unknown-user" }
  | { kind: "throttled"; retryAfter: number }
  | { kind: "bad-code" }
  | { kind: "suspended" }
  | { kind: "updated"; account: Account };

/**
 * Sets a new password with a reset code (`app.reset_password`): a valid code
 * is consumed, a wrong one uses up an attempt (and that commits), and the
 * account is marked verified and its earlier tokens revoked.
 */
export function resetPassword(
  input: {
    email: string;
    code: string;
    password: string;
    bcryptCost: number;
    limits: Pick<SecurityLimits, "resetCodeMaxWrongPerAccount" | "resetCodeAccountWindowSeconds">;
  },
): Query<Partial<AccountRow> & { outcome: PasswordReset["kind"]; retry_after: number | null }, PasswordReset> {
  return {
    text: "select * from app.reset_password($1, $2, $3, $4, $5, $6)",
    values: [
      input.email,
      input.code,
      input.password,
      input.bcryptCost,
      input.limits.resetCodeMaxWrongPerAccount,
      input.limits.resetCodeAccountWindowSeconds,
    ],
    read: ([row]) => {
      if (row.outcome === "updated") return { kind: "updated", account: toAccount(row as AccountRow) };
      if (row.outcome === "throttled") return { kind: "throttled", retryAfter: row.retry_after ?? 1 };
      return { kind: row.outcome } as PasswordReset;
    },
  };
}
