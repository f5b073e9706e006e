/**
 * What an operator does to the benchmark's accounts, in SQL as the database's owner: make verified accounts with live
 * sessions to drive requests with, make one an admin with the operator command's own statement, or mark one's
 * address verified, as its mailed code would.
 */
import postgres from "postgres";
import { setRole } from "../scripts/admin.ts";
import { testJwtSecret } from "../dev/harness/stack.ts";
import { signAccessToken } from "../supabase/functions/_shared/auth/access-tokens.ts";
import { bearer } from "../supabase/functions/_shared/contract/mod.ts";

/** A benchmark account: its id and the `authorization` header of a live session of its own. */
export interface SignedInUser {
  id: string;
  authorization: string;
}

/**
 * `count` verified accounts named after `label`, each with a live session of an account with no second factor (as
 * every bench account is), signed with the stacks' test secret. Made in one statement: no sign-up's hashing.
 */
export async function signedInUsers(databaseUrl: string, count: number, label: string): Promise<SignedInUser[]> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const accounts = await sql<{ id: string; email: string; token_version: number; session_id: string }[]>`
      with made as (
        insert into app.users (name, email, password_hash, is_verified)
        select ${label} || ' ' || n, ${label} || '-' || n || '@example.com', 'unused', true
        from generate_series(1, ${count}) as n
        returning id, email, token_version
      ), started as (
        insert into app.sessions (user_id, expires_at) select id, now() + interval '1 hour' from made
        returning id, user_id
      )
      select made.*, started.id as session_id from made join started on started.user_id = made.id`;
    const secret = new TextEncoder().encode(testJwtSecret);
    return await Promise.all(accounts.map(async (account) => {
      const { jwt } = await signAccessToken({
        user: { id: account.id, email: account.email, role: "STANDARD_USER" },
        tokenVersion: account.token_version,
        sessionId: account.session_id,
        level: { aal: "aal1", startedAt: new Date() },
      }, secret);
      return { id: account.id, authorization: bearer(jwt) };
    }));
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Makes `email` an admin with the operator command's own statement. */
export async function grantAdminRole(databaseUrl: string, email: string): Promise<void> {
  const sql = postgres(databaseUrl, { max: 1, prepare: false, onnotice: () => {} });
  try {
    await setRole((text) => sql.unsafe(text), email, "ADMIN");
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Marks the account of `email` verified, as its owner's mailed code would: enrolling a factor needs it. */
export async function markVerified(databaseUrl: string, email: string): Promise<void> {
  const sql = postgres(databaseUrl, { max: 1, prepare: false, onnotice: () => {} });
  try {
    await sql`update app.users set is_verified = true where email = ${email}`;
  } finally {
    await sql.end({ timeout: 5 });
  }
}
