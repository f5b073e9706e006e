/**
 * `npm run bench`: the service against its own floor on real PostgreSQL, in
 * one run because this kind of machine is shared and noisy.
 *
 * 1. A database: DATABASE_URL (empty but for the migrations), or a fresh one
 *    on 127.0.0.1:5432 that is dropped at the end.
 * 2. The stack's own migrator, then the seed (1,000,000 notes, 1,000 users).
 * 3. EXPLAIN of the heavy user's listing (must use the owner index, no
 *    sequential scan, no sort) and the cost of its total count.
 * 4. Each scenario on the functions (the local stack) and on the floor
 *    (bench/baseline/server.ts), warmed up, then at fixed concurrency for a
 *    fixed time.
 * 5. Round trips per endpoint: the stack behind a TCP proxy that adds a
 *    round-trip time (BENCH_RTT_MS, default 40 ms), against no delay; and
 *    the first page of a 10-note user against the 20,000-note user.
 * 6. Cold start and bundle size of each function.
 * 7. The same scenarios on the embedded PGlite, for information.
 *
 * Prints Markdown tables and writes bench/results/<timestamp>.json. Exits 1
 * when a plan check fails or a request failed; missed ratio targets are
 * reported, not fatal. BENCH_SECONDS shortens or lengthens the timed runs.
 */
import postgres from "postgres";
import { loadConfig } from "../supabase/functions/_shared/config.ts";
import { closeDb } from "../supabase/functions/_shared/db.ts";
import { startEmbeddedPostgres } from "../dev/embedded-postgres.ts";
import { migrate } from "../dev/migrate.ts";
import {
  createScratchDatabase,
  type RunningStack,
  sharedStackLimits,
  startStack,
  testAnonKey,
  testJwtSecret,
} from "../tests/support/stack.ts";
import { loadFixtures } from "./fixtures.ts";
import { drive, summarize } from "./load.ts";
import { checkListPlan, type PlanCheck } from "./plans.ts";
import { startDeno } from "../dev/processes.ts";
import { compare, type Comparison, loadTable, markdownTable, plainTable, writeResults } from "./report.ts";
import { buildScenarios, type Scenario, type ScenarioFixtures } from "./scenarios.ts";
import { seedNotes, seedPlan } from "./seed.ts";
import { measureFirstPages, measureRoundTrips } from "./round-trips.ts";
import { startTcpProxy } from "../tests/support/tcp-proxy.ts";
import { functionNames } from "../dev/functions.ts";
import { bundleSize, coldStart, probeFor } from "./startup.ts";

const seconds = Number(Deno.env.get("BENCH_SECONDS") || 10);
const settings = {
  /** The round-trip time the delaying proxy adds, and sequential samples per median. */
  rttMs: Number(Deno.env.get("BENCH_RTT_MS") || 40),
  roundTripSamples: 15,
  /** Concurrent connections of the load generator: twice the pool, so requests queue for it. */
  connections: 10,
  /** bcrypt keeps both cores busy with fewer; more would only lengthen the queue. */
  loginConnections: 4,
  seconds,
  warmupSeconds: Math.min(2, seconds),
  pgliteSeconds: Math.max(1, Math.round(seconds / 2)),
  coldStartRuns: 3,
  notesToSave: 10_000,
  // More than both targets can delete in their runs, so no id is used twice.
  notesToDelete: 150_000,
  password: "bench-password-1",
};

const log = (line: string) => console.log(line);

/** The environment of the stack, the floor and the cold-started functions alike. */
function serviceEnv(databaseUrl: string): Record<string, string> {
  // The stack's per-address login limit would stop a load test from one address after 30 logins.
  return { DATABASE_URL: databaseUrl, JWT_SECRET: testJwtSecret, SUPABASE_ANON_KEY: testAnonKey, ...sharedStackLimits };
}

/** Seeds the database at `databaseUrl` through one connection and prepares the fixtures. */
async function seedAndLoad(databaseUrl: string, env: Record<string, string>) {
  const config = loadConfig(new Map(Object.entries(env)));
  const sql = postgres(databaseUrl, { max: 1, prepare: false, onnotice: () => {} });
  try {
    const [{ count }] = await sql<{ count: number }[]>`select count(*)::int from public.notes`;
    if (count > 0) throw new Error("the database already has notes; point DATABASE_URL at an empty database");
    const seeded = await seedNotes(sql, { password: settings.password, bcryptCost: config.bcryptCost });
    log(`Seeded ${seedPlan.notes} notes over ${seedPlan.users} users in ${seeded.seconds.toFixed(1)} s`);
    const fixtures = await loadFixtures(sql, {
      seeded,
      jwtSecret: config.jwtSecret,
      anonKey: testAnonKey,
      notesToSave: settings.notesToSave,
      notesToDelete: settings.notesToDelete,
    });
    return { seeded, fixtures, config };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

function connectionsOf(scenario: Scenario): number {
  return scenario.kind === "login" ? settings.loginConnections : settings.connections;
}

/**
 * One scenario on the floor and on the functions: both warmed up, then timed
 * in the order floor, functions, functions, floor (half the time each), so a
 * drift in the machine's load during the scenario weighs on both alike.
 */
async function measurePair(scenario: Scenario, floorOrigin: string, stackOrigin: string) {
  const options = { connections: connectionsOf(scenario), seconds: settings.seconds / 2 };
  const warmup = { ...options, seconds: settings.warmupSeconds };
  await drive(floorOrigin, scenario.next, warmup);
  await drive(stackOrigin, scenario.next, warmup);
  const floorFirst = await drive(floorOrigin, scenario.next, options);
  const stackFirst = await drive(stackOrigin, scenario.next, options);
  const stackSecond = await drive(stackOrigin, scenario.next, options);
  const floorSecond = await drive(floorOrigin, scenario.next, options);
  return { baseline: summarize([floorFirst, floorSecond]), stack: summarize([stackFirst, stackSecond]) };
}

/** Each scenario on the functions and on the floor. */
async function compareWithFloor(
  stackUrl: string,
  floorUrl: string,
  fixtures: ScenarioFixtures,
): Promise<Comparison[]> {
  const comparisons: Comparison[] = [];
  for (const scenario of buildScenarios(fixtures)) {
    const { stack, baseline } = await measurePair(scenario, new URL(floorUrl).origin, new URL(stackUrl).origin);
    const comparison = compare(scenario, stack, baseline);
    log(
      `  ${scenario.name}: ${stack.requestsPerSecond.toFixed(0)} req/s vs floor ` +
        `${baseline.requestsPerSecond.toFixed(0)} (${comparison.requestsRatio.toFixed(2)}x)`,
    );
    comparisons.push(comparison);
  }
  return comparisons;
}

async function postgresVersion(databaseUrl: string): Promise<string> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const [{ version }] = await sql<{ version: string }[]>`select version()`;
    return version;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

async function onPostgres(databaseUrl: string) {
  const env = serviceEnv(databaseUrl);
  log(`Migrating with the stack's migrator`);
  await migrate(databaseUrl, log);
  const { fixtures, config } = await seedAndLoad(databaseUrl, env);

  // The plan check runs the claims through the functions' own withCallerTransaction, which reads this.
  for (const [name, value] of Object.entries(env)) Deno.env.set(name, value);
  const heavyClaims = { sub: fixtures.heavyUser.id, role: "authenticated" as const, token_version: 0 };
  const plans: PlanCheck[] = [];
  for (const page of [{ limit: 10, offset: 0 }, { limit: 100, offset: 0 }, { limit: 10, offset: 10_000 }]) {
    plans.push(await checkListPlan(heavyClaims, page));
  }
  await closeDb();

  log("Starting the stack and the floor");
  let stack: RunningStack | undefined;
  const floor = await startDeno(new URL("./baseline/server.ts", import.meta.url).pathname, env, /Ready on (\S+)/);
  try {
    stack = await startStack({ databaseUrl, env });
    log("Load, per scenario:");
    const comparisons = await compareWithFloor(stack.baseUrl, floor.ready[1], fixtures);
    await stack.stop();
    stack = undefined;
    await floor.stop();

    log(`Round trips: the stack behind a proxy adding ${settings.rttMs} ms per round trip`);
    const { roundTrips, firstPages } = await measureLatencies(databaseUrl, env, fixtures.heavyUser.authorization);

    log("Cold starts and bundles");
    const credentials = { authorization: fixtures.heavyUser.authorization, apiKey: testAnonKey };
    const names = await functionNames();
    // One untimed start fills Deno's transpile cache, as a deployment ships its code ready to run.
    await coldStart(names[0], env, probeFor(names[0], credentials), 1);
    const coldStarts = [];
    for (const name of names) {
      coldStarts.push(await coldStart(name, env, probeFor(name, credentials), settings.coldStartRuns));
    }
    const bundleDir = await Deno.makeTempDir({ prefix: "notes-bench-bundles-" });
    const bundles = [];
    try {
      for (const name of names) bundles.push(await bundleSize(name, bundleDir));
    } finally {
      await Deno.remove(bundleDir, { recursive: true });
    }
    return {
      comparisons,
      plans,
      roundTrips,
      firstPages,
      coldStarts,
      bundles,
      bcryptCost: config.bcryptCost,
      poolMax: config.dbPoolMax,
    };
  } finally {
    await stack?.stop();
    await floor.stop();
  }
}

/** Round trips per endpoint and the heavy/light first page, on a stack that reaches Postgres through a proxy. */
async function measureLatencies(databaseUrl: string, env: Record<string, string>, heavyAuthorization: string) {
  const database = new URL(databaseUrl);
  const proxy = await startTcpProxy({ host: database.hostname, port: Number(database.port || 5432) });
  // The proxy's URL goes in env too: the stack's env would otherwise name the database directly.
  const stack = await startStack({ env: { ...env, DATABASE_URL: proxy.route(databaseUrl) } });
  try {
    const samples = settings.roundTripSamples;
    const roundTrips = await measureRoundTrips(stack.baseUrl, proxy, {
      apiKey: testAnonKey,
      rttMs: settings.rttMs,
      samples,
    });
    for (const row of roundTrips) log(`  ${row.endpoint}: ${row.roundTrips.toFixed(1)} round trips`);
    const firstPages = await measureFirstPages(stack.baseUrl, {
      apiKey: testAnonKey,
      samples,
      heavy: { authorization: heavyAuthorization, notes: seedPlan.heavyUserNotes },
    });
    log(`  first page, ${firstPages.heavyNotes} notes vs ${firstPages.lightNotes}: ${firstPages.ratio.toFixed(2)}x`);
    return { roundTrips, firstPages };
  } finally {
    await stack.stop();
    await proxy.close();
  }
}

async function onPglite() {
  const dataDir = await Deno.makeTempDir({ prefix: "notes-bench-pglite-" });
  try {
    const embedded = await startEmbeddedPostgres(dataDir);
    let fixtures: ScenarioFixtures;
    try {
      await migrate(embedded.url, () => {});
      // The seed's env names a database only to satisfy the config; the connection is the embedded one.
      ({ fixtures } = await seedAndLoad(embedded.url, serviceEnv(embedded.url)));
    } finally {
      await embedded.stop();
    }
    // An empty DATABASE_URL makes the stack open the embedded database in dataDir.
    const stack = await startStack({ env: { ...serviceEnv(""), PGLITE_DATA_DIR: dataDir } });
    try {
      const results = [];
      for (const scenario of buildScenarios(fixtures)) {
        const connections = connectionsOf(scenario);
        const origin = new URL(stack.baseUrl).origin;
        await drive(origin, scenario.next, { connections, seconds: settings.warmupSeconds });
        const result = summarize([
          await drive(origin, scenario.next, { connections, seconds: settings.pgliteSeconds }),
        ]);
        log(`  ${scenario.name}: ${result.requestsPerSecond.toFixed(0)} req/s`);
        results.push({ name: scenario.name, result });
      }
      return results;
    } finally {
      await stack.stop();
    }
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
}

async function main() {
  const startedAt = new Date();
  const given = Deno.env.get("DATABASE_URL");
  const scratch = given ? undefined : await createScratchDatabase("notes_bench");
  const databaseUrl = given ?? scratch?.url ?? "";
  let postgresRun;
  let version;
  try {
    version = await postgresVersion(databaseUrl);
    log(`PostgreSQL: ${version}`);
    postgresRun = await onPostgres(databaseUrl);
  } finally {
    await scratch?.drop();
  }
  log("The same scenarios on the embedded PGlite (for information)");
  const pglite = await onPglite();

  const { comparisons, plans, roundTrips, firstPages, coldStarts, bundles } = postgresRun;
  const record = {
    startedAt: startedAt.toISOString(),
    command: "npm run bench",
    machine: {
      cores: navigator.hardwareConcurrency,
      os: Deno.build.os,
      arch: Deno.build.arch,
      deno: Deno.version.deno,
    },
    postgres: version,
    settings: { ...settings, bcryptCost: postgresRun.bcryptCost, dbPoolMax: postgresRun.poolMax, seed: seedPlan },
    scenarios: comparisons,
    plans,
    roundTrips,
    firstPages,
    coldStarts,
    bundles,
    pglite,
  };
  const file = await writeResults(record, startedAt);

  const mb = (bytes: number) => (bytes / 1_048_576).toFixed(2);
  console.log(`\n## PostgreSQL (${navigator.hardwareConcurrency} cores, ${version.split(" on ")[0]})\n`);
  console.log(loadTable(comparisons));
  console.log("\n## Query plans of the heavy user's listing (20,000 notes)\n");
  console.log(markdownTable(
    ["Page", "Plan check", "Nodes", "Execution ms"],
    plans.map((plan) => [
      `limit ${plan.page.limit} offset ${plan.page.offset}`,
      plan.passed ? "passed" : `FAILED: ${plan.problems.join(", ")}`,
      plan.nodes.join(" > "),
      plan.executionMs.toFixed(1),
    ]),
  ));
  console.log(`\n## Round trips to Postgres per request (${settings.rttMs} ms added per round trip)\n`);
  const roundTripTarget = (endpoint: string) => endpoint.startsWith("notes-") || endpoint === "auth/register" ? 1 : 2;
  console.log(markdownTable(
    ["Endpoint", "p50 ms, no delay", `p50 ms, +${settings.rttMs} ms RTT`, "Round trips", "Target"],
    roundTrips.map((row) => [
      row.endpoint,
      row.directMs.toFixed(1),
      row.delayedMs.toFixed(1),
      row.roundTrips.toFixed(1),
      `${Math.round(row.roundTrips) <= roundTripTarget(row.endpoint) ? "met" : "MISSED"} (≤ ${
        roundTripTarget(row.endpoint)
      })`,
    ]),
  ));
  console.log(
    `\nFirst page (limit 10): ${firstPages.heavyNotes} notes ${firstPages.heavyMs.toFixed(2)} ms, ` +
      `${firstPages.lightNotes} notes ${firstPages.lightMs.toFixed(2)} ms: ${firstPages.ratio.toFixed(2)}x ` +
      `(target ≤ 1.25x: ${firstPages.ratio <= 1.25 ? "met" : "MISSED"})`,
  );
  console.log("\n## Start-up and size per function (targets: < 150 ms, < 1 MB)\n");
  console.log(markdownTable(
    ["Function", "Cold start ms (median)", "Runs ms", "First answer", "Bundle MB", "Minified MB"],
    coldStarts.map((start, index) => [
      start.name,
      start.medianMs.toFixed(0),
      start.runsMs.map((ms) => ms.toFixed(0)).join(", "),
      String(start.status),
      mb(bundles[index].bytes),
      mb(bundles[index].minifiedBytes),
    ]),
  ));
  console.log("\n## Embedded PGlite (information only, no target)\n");
  console.log(plainTable(pglite));
  console.log(`\nResults: ${file}`);

  const failed = comparisons.some((row) => row.stack.failed > 0 || row.baseline.failed > 0) ||
    plans.some((plan) => !plan.passed);
  if (failed) {
    console.error("\nA plan check failed or requests failed; see above.");
    Deno.exit(1);
  }
}

await main();
