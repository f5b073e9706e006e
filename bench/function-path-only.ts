/**
 * Only the function path against the database's rate (part of `npm run bench`): `notes-create` over 1,000 users
 * against pgbench of the transaction it sends, on a fresh database with those users and no notes, in about two
 * minutes instead of the whole benchmark's twenty.
 *
 * `npm run bench:function-path`. DATABASE_URL names an empty database to migrate, or a fresh one on 127.0.0.1:5432
 * is made and dropped. BENCH_SECONDS sets each timed run (default 10).
 */
import postgres from "postgres";
import {
  createScratchDatabase,
  sharedStackLimits,
  startStack,
  testAnonKey,
  testJwtSecret,
  testSecrets,
} from "../dev/harness/stack.ts";
import { migrate } from "../dev/migrate.ts";
import { loadConfig } from "../supabase/functions/_shared/config/mod.ts";
import { signAccessToken } from "../supabase/functions/_shared/auth/access-tokens.ts";
import { bearer } from "../supabase/functions/_shared/contract/mod.ts";
import { functionPathTable, measureFunctionPath, type PathUser } from "./function-path.ts";

const users = 1_000;
const seconds = Number(Deno.env.get("BENCH_SECONDS") || 10);

/** `count` verified accounts, each with a live session, and their tokens. */
async function signedInUsers(databaseUrl: string, count: number): Promise<PathUser[]> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const accounts = await sql<{ id: string; email: string; token_version: number; session_id: string }[]>`
      with made as (
        insert into app.users (name, email, password_hash, is_verified)
        select 'Path ' || n, 'path-' || n || '@example.com', 'unused', true from generate_series(1, ${count}) as n
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

const given = Deno.env.get("DATABASE_URL");
const scratch = given ? undefined : await createScratchDatabase("notes_function_path");
const databaseUrl = given ?? scratch?.url ?? "";
try {
  await migrate(databaseUrl, () => {});
  const env = { ...testSecrets, SUPABASE_ANON_KEY: testAnonKey, ...sharedStackLimits, DATABASE_URL: databaseUrl };
  const config = loadConfig(new Map(Object.entries(env)));
  const stack = await startStack({ env });
  try {
    const result = await measureFunctionPath({
      databaseUrl,
      stackUrl: stack.baseUrl,
      users: await signedInUsers(databaseUrl, users),
      poolSize: config.dbPoolMax,
      connections: 2 * config.dbPoolMax,
      seconds,
      rounds: 3,
      statementTimeoutMs: config.statementTimeoutMs,
    });
    console.log(`## notes-create over ${users} users against pgbench of its transaction (${seconds} s runs)\n`);
    console.log(functionPathTable(result));
  } finally {
    await stack.stop();
  }
} finally {
  await scratch?.drop();
}
