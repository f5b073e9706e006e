/**
 * `npm run bench:cold-starts`: only the benchmark's cold starts (step 5 of
 * `npm run bench`), on a fresh database holding one user, with more runs per
 * function. A few minutes instead of the whole benchmark's twenty, for a
 * change that moves what a function loads.
 *
 * DATABASE_URL names an empty database to migrate, or a fresh one on
 * 127.0.0.1:5432 is made and dropped. COLD_START_RUNS sets the runs (7).
 * COLD_START_AGAINST names another checkout (e.g. a `git worktree` of the
 * commit before a change) whose functions start interleaved with these, so
 * the machine's drift between two runs does not pass for a difference.
 */
import postgres from "postgres";
import {
  createScratchDatabase,
  sharedStackLimits,
  testAnonKey,
  testJwtSecret,
  testSecrets,
} from "../dev/harness/stack.ts";
import { migrate } from "../dev/migrate.ts";
import { signAccessToken } from "../supabase/functions/_shared/auth/access-tokens.ts";
import { bearer } from "../supabase/functions/_shared/contract/mod.ts";
import { resolve } from "node:path";
import { againstName, type ColdStart, coldStartTable, measureColdStarts } from "./startup.ts";
import { markdownTable } from "./report.ts";

const runs = Number(Deno.env.get("COLD_START_RUNS") || 7);
const againstCheckout = Deno.env.get("COLD_START_AGAINST");
const against = againstCheckout ? new URL(`file://${resolve(againstCheckout)}/supabase/functions/`) : undefined;

/** One verified user with a live session, and its access token. */
async function signedInUser(databaseUrl: string): Promise<string> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const [account] = await sql<{ id: string; email: string; token_version: number; session_id: string }[]>`
      with account as (
        insert into app.users (name, email, password_hash, is_verified)
        values ('Cold Start', 'cold-start@example.com', 'unused', true)
        returning id, email, token_version
      ), started as (
        insert into app.sessions (user_id, expires_at) select id, now() + interval '1 hour' from account
        returning id
      )
      select account.*, started.id as session_id from account, started`;
    const { jwt } = await signAccessToken(
      {
        user: { id: account.id, email: account.email, role: "STANDARD_USER" },
        tokenVersion: account.token_version,
        sessionId: account.session_id,
        // A session of an account with no second factor, as every bench account is.
        level: { aal: "aal1", startedAt: new Date() },
      },
      new TextEncoder().encode(testJwtSecret),
    );
    return bearer(jwt);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Each function's first answer and listening, this checkout against the other, as ratios. */
function comparisonTable(starts: ColdStart[]): string {
  const byName = new Map(starts.map((start) => [start.name, start]));
  const rows = starts.flatMap((start) => {
    const other = byName.get(againstName(start.name));
    if (!other) return [];
    return [[
      start.name,
      `${other.medianMs.toFixed(0)} → ${start.medianMs.toFixed(0)}`,
      `${(start.medianMs / other.medianMs).toFixed(2)}×`,
      `${other.listeningMs.toFixed(0)} → ${start.listeningMs.toFixed(0)}`,
      `${(start.listeningMs / other.listeningMs).toFixed(2)}×`,
    ]];
  });
  return markdownTable(["Function", "First answer ms", "Ratio", "Listening ms", "Ratio"], rows);
}

const given = Deno.env.get("DATABASE_URL");
const scratch = given ? undefined : await createScratchDatabase("notes_cold_starts");
const databaseUrl = given ?? scratch?.url ?? "";
try {
  await migrate(databaseUrl, () => {});
  const authorization = await signedInUser(databaseUrl);
  const env = {
    DATABASE_URL: databaseUrl,
    ...testSecrets,
    SUPABASE_ANON_KEY: testAnonKey,
    ...sharedStackLimits,
  };
  const coldStarts = await measureColdStarts(env, { authorization, apiKey: testAnonKey }, runs, against);
  console.log(`## Cold start per function, median of ${runs} (${navigator.hardwareConcurrency} cores)\n`);
  console.log(coldStartTable(coldStarts));
  if (against) {
    console.log(`\n## This checkout against ${againstCheckout}, started in turn\n`);
    console.log(comparisonTable(coldStarts.functions));
  }
} finally {
  await scratch?.drop();
}
