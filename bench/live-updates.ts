/**
 * Only the benchmark's live updates (step 6 of `npm run bench`), on a fresh
 * database without the seed: a few minutes instead of the whole benchmark's
 * twenty, for a change to the stream, its notices or its poll.
 *
 * `npm run bench:live-updates`. DATABASE_URL names an empty
 * database to migrate, or a fresh one on 127.0.0.1:5432 is made and dropped;
 * it must be reached directly (not through a pooler), since one of the
 * stacks listens on it for notices.
 */
import { createScratchDatabase, sharedStackLimits, testAnonKey, testSecrets } from "../dev/harness/stack.ts";
import { migrate } from "../dev/migrate.ts";
import { liveUpdateSettings, measureLiveUpdates, openStreamsTable, writeToEventTable } from "./streams.ts";

const given = Deno.env.get("DATABASE_URL");
const scratch = given ? undefined : await createScratchDatabase("notes_live_updates");
const databaseUrl = given ?? scratch?.url ?? "";
try {
  await migrate(databaseUrl, () => {});
  const env = {
    DATABASE_URL: databaseUrl,
    ...testSecrets,
    SUPABASE_ANON_KEY: testAnonKey,
    ...sharedStackLimits,
  };
  const runs = await measureLiveUpdates(databaseUrl, env, { apiKey: testAnonKey, ...liveUpdateSettings });
  console.log(
    `## From a write's answer to its event on another session's stream (${navigator.hardwareConcurrency} cores)\n`,
  );
  console.log(writeToEventTable(runs));
  console.log(`\n## ${liveUpdateSettings.streams} streams of one user open at once\n`);
  console.log(openStreamsTable(runs));
} finally {
  await scratch?.drop();
}
