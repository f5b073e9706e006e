/**
 * SQL of the account tables (`app.users`, `app.password_reset_codes`,
 * `app.mail_outbox`). Run as the connection's own role: these tables are not
 * exposed to `anon` or `authenticated`. Passwords and codes are hashed by
 * pgcrypto inside Postgres and never leave it in the clear.
 */
import type { User } from "../contract.ts";
import type { Sql, TransactionSql } from "../db.ts";

type Queryable = Sql | TransactionSql;

interface UserRow {
  id: string;
  name: string;
  phone_number: string | null;
  email: string;
  role: User["role"];
  status: User["status"];
  is_verified: boolean;
  created_at: Date;
  updated_at: Date;
}

const userColumns = "id, name, phone_number, email, role, status, is_verified, created_at, updated_at";

/** A user and the token version its access tokens must carry (see `app.users.token_version`). */
export interface Account {
  user: User;
  tokenVersion: number;
}

type AccountRow = UserRow & { token_version: number };

const accountColumns = `${userColumns}, token_version`;

function toAccount(row: AccountRow): Account {
  return { user: toUser(row), tokenVersion: row.token_version };
}

/** The API's User from a row of `app.users`. */
export function toUser(row: UserRow): User {
  return {
    id: row.id,
    name: row.name,
    phoneNumber: row.phone_number,
    email: row.email,
    role: row.role,
    status: row.status,
    isVerified: row.is_verified,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** Inserts a user with a bcrypt hash of `password`. Throws 23505 when the email is taken. */
export async function insertUser(
  sql: Queryable,
  input: { name: string; email: string; password: string; bcryptCost: number },
): Promise<Account> {
  const [row] = await sql<AccountRow[]>`
    insert into app.users (name, email, password_hash)
    values (${input.name}, ${input.email},
            extensions.crypt(${input.password}, extensions.gen_salt('bf', ${input.bcryptCost})))
    returning ${sql.unsafe(accountColumns)}`;
  return toAccount(row);
}

/**
 * The user with `email` and whether `password` matches. For an unknown email
 * it still hashes the password once at the same cost, so the answer takes as
 * long as for a wrong password.
 */
export async function checkCredentials(
  sql: Queryable,
  input: { email: string; password: string; bcryptCost: number },
): Promise<{ account: Account; passwordMatches: boolean } | undefined> {
  const [row] = await sql<(Partial<AccountRow> & { password_matches: boolean })[]>`
    select u.id, u.name, u.phone_number, u.email, u.role, u.status, u.is_verified,
           u.created_at, u.updated_at, u.token_version,
           coalesce(u.password_hash = extensions.crypt(${input.password}, probe.salt), false)
             as password_matches
    from (select coalesce(
            (select password_hash from app.users where email = ${input.email}),
            extensions.gen_salt('bf', ${input.bcryptCost})) as salt) as probe
    left join app.users u on u.email = ${input.email}`;
  if (!row?.id) return undefined;
  return { account: toAccount(row as AccountRow), passwordMatches: row.password_matches };
}

/** Locks and returns the user with `email`, or undefined. */
export async function lockUserByEmail(sql: TransactionSql, email: string): Promise<User | undefined> {
  const [row] = await sql<UserRow[]>`
    select ${sql.unsafe(userColumns)} from app.users where email = ${email} for update`;
  return row ? toUser(row) : undefined;
}

/** Replaces the user's reset code with a hash of `code`, valid for `ttlMinutes` and `attempts` tries. */
export async function replaceResetCode(
  sql: TransactionSql,
  input: { userId: string; code: string; ttlMinutes: number; attempts: number },
): Promise<void> {
  await sql`
    insert into app.password_reset_codes (user_id, code_hash, expires_at, attempts_left)
    values (${input.userId}, extensions.crypt(${input.code}, extensions.gen_salt('bf', 6)),
            now() + make_interval(mins => ${input.ttlMinutes}), ${input.attempts})
    on conflict (user_id) do update
      set code_hash = excluded.code_hash, expires_at = excluded.expires_at,
          attempts_left = excluded.attempts_left, created_at = now()`;
}

export type CodeCheck = "valid" | "wrong" | "unusable";

/**
 * Checks `code` against the user's live reset code. A wrong code uses up one
 * attempt; a valid one is consumed, so each code works once.
 */
export async function consumeResetCode(sql: TransactionSql, userId: string, code: string): Promise<CodeCheck> {
  const [row] = await sql<{ matches: boolean }[]>`
    select code_hash = extensions.crypt(${code}, code_hash) as matches
    from app.password_reset_codes
    where user_id = ${userId} and expires_at > now() and attempts_left > 0
    for update`;
  if (!row) return "unusable";
  if (row.matches) {
    await sql`delete from app.password_reset_codes where user_id = ${userId}`;
    return "valid";
  }
  await sql`update app.password_reset_codes set attempts_left = attempts_left - 1 where user_id = ${userId}`;
  return "wrong";
}

/**
 * Sets a new password hash and marks the account verified (its email proved
 * reachable). Every access token issued before is revoked.
 */
export async function setPasswordAndVerify(
  sql: TransactionSql,
  input: { userId: string; password: string; bcryptCost: number },
): Promise<Account> {
  // The users_revoke_tokens trigger raises token_version here, so the returned one is the new one.
  const [row] = await sql<AccountRow[]>`
    update app.users
    set password_hash = extensions.crypt(${input.password}, extensions.gen_salt('bf', ${input.bcryptCost})),
        is_verified = true
    where id = ${input.userId}
    returning ${sql.unsafe(accountColumns)}`;
  return toAccount(row);
}

/** Queues a mail for delivery by whatever drains the outbox. */
export async function queueMail(
  sql: TransactionSql,
  mail: { recipient: string; subject: string; body: string },
): Promise<void> {
  await sql`
    insert into app.mail_outbox (recipient, subject, body)
    values (${mail.recipient}, ${mail.subject}, ${mail.body})`;
}
