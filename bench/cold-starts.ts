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
import { createScratchDatabase, sharedStackLimits, testAnonKey, testSecrets } from "../dev/harness/stack.ts";
import { migrate } from "../dev/migrate.ts";
import { signedInUsers } from "./operator.ts";
import { resolve } from "node:path";
import { againstName, type ColdStart, coldStartTable, measureColdStarts } from "./startup.ts";
import { markdownTable } from "./report.ts";

const runs = Number(Deno.env.get("COLD_START_RUNS") || 7);
const againstCheckout = Deno.env.get("COLD_START_AGAINST");
const against = againstCheckout ? new URL(`file://${resolve(againstCheckout)}/supabase/functions/`) : undefined;

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
  const [{ authorization }] = await signedInUsers(databaseUrl, 1, "cold-start");
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
