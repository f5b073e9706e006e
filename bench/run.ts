/**
 * `npm run bench`: the service against its own floor on real PostgreSQL, in
 * one run because this kind of machine is shared and noisy.
 *
 * 1. A database: DATABASE_URL (empty but for the migrations), or a fresh one
 *    on 127.0.0.1:5432 that is dropped at the end.
 * 2. The stack's own migrator, then the seed (1,000,000 notes, 1,000 users).
 * 3. Each scenario on the functions (the local stack) and on the floor
 *    (bench/baseline/server.ts) served by the same bounded server, warmed
 *    up, then at fixed concurrency for a fixed time; then the floor on that
 *    server against the floor on a bare `Deno.serve`, which is what the
 *    server's bounds cost; then each variant against its plain request.
 * 4. Round trips per endpoint: the stack behind a TCP proxy that adds a
 *    round-trip time (BENCH_RTT_MS, default 40 ms), against no delay; and
 *    the first page of a 10-note user against the 20,000-note user: every
 *    note, one status, and a search for a word 10 notes hold.
 * 5. Cold start of each function.
 * 6. Live updates, on a stack woken by notices (LISTEN on the bench
 *    database) and on one woken by the counter poll: from a write's answer
 *    to its event on another session's stream, and 200 open streams with the
 *    database connections and memory they hold (`bench/live-updates.ts` runs
 *    only this step).
 * 7. The first page of a 20,000-note import against a 10-note user, on
 *    PostgreSQL and PGlite, before and after ANALYZE (`bench/listing-plans.ts`,
 *    `npm run bench:listing`), and bare inserts into public.notes with pgbench:
 *    tps with and without the triggers and WAL per insert (`bench/writes.ts`,
 *    `npm run bench:writes`), each on databases of its own.
 * 8. The function path: `notes-create` over 1,000 users against pgbench of
 *    the transaction it sends, and the floor's against it (`bench/function-path.ts`,
 *    `npm run bench:function-path`), on a database of its own.
 * 9. Attachment uploads (reserve, PUT to the store's signed URL, complete) against writing the same bytes to the
 *    same disk (`bench/upload-throughput.ts`, `npm run bench:uploads`), on a stack of their own.
 *
 * The listing's query plan is checked by `npm run check:plan` (in CI), and
 * what each function bundles to by `npm run check:deploy`.
 *
 * Prints Markdown tables and writes bench/results/<timestamp>.json. Exits 1
 * when a request failed; missed ratio targets are reported, not fatal.
 * BENCH_SECONDS shortens or lengthens the timed runs.
 */
import postgres from "postgres";
import { loadConfig } from "../supabase/functions/_shared/config/mod.ts";
import { migrate } from "../dev/migrate.ts";
import {
  createScratchDatabase,
  type RunningStack,
  sharedStackLimits,
  startStack,
  testAnonKey,
  testSecrets,
} from "../dev/harness/stack.ts";
import { loadFixtures } from "./fixtures.ts";
import { drive, quantile } from "./load.ts";
import { loginFlood } from "./login-flood.ts";
import { measureUploadThroughput, uploadThroughputTable } from "./upload-throughput.ts";
import { startFloor } from "./floor.ts";
import {
  compare,
  type Comparison,
  loadTable,
  loginHashingTable,
  markdownTable,
  type Round,
  serverTable,
  targets,
  variantTable,
  writeResults,
} from "./report.ts";
import { buildScenarios, loginHashInPostgresPath, type Scenario } from "./scenarios.ts";
import { seedNotes, seedPlan } from "./seed.ts";
import { measureFirstPages } from "./first-pages.ts";
import { measureRoundTrips, roundTripTable } from "./round-trips.ts";
import { grantAdminRole, markVerified } from "./operator.ts";
import { startTcpProxy } from "../dev/harness/tcp-proxy.ts";
import { identityProviderForStack } from "../dev/harness/identity-provider.ts";
import { coldStartTable, measureColdStarts } from "./startup.ts";
import { benchListingPlans, listingPlanTable } from "./listing-plans.ts";
import { benchWrites, writeCostTable, writeSettings } from "./writes.ts";
import { benchFunctionPath, functionPathSettings, functionPathTable } from "./function-path.ts";
import { liveUpdateSettings, measureLiveUpdates, openStreamsTable, writeToEventTable } from "./streams.ts";

const seconds = Number(Deno.env.get("BENCH_SECONDS") || 20);
const settings = {
  /** The round-trip time the delaying proxy adds, and sequential samples per median. */
  rttMs: Number(Deno.env.get("BENCH_RTT_MS") || 40),
  roundTripSamples: 15,
  /** Concurrent connections of the load generator: twice the pool, so requests queue for it. */
  connections: 10,
  /** bcrypt keeps both cores busy with fewer; more would only lengthen the queue. */
  loginConnections: 4,
  seconds,
  /** Each timed run of the function path, the floors and pgbench beside them (each of its rounds is eight of them). */
  functionPathSeconds: Math.ceil(seconds / 2),
  /** Rounds of floor, functions, functions, floor per scenario; the ratio is their median. */
  rounds: 5,
  /**
   * Rounds of plain, variant, variant, plain per variant. Two requests both of the functions differ less
   * than the functions and the floor do, so the machine's noise weighs more: nine rounds' median holds it.
   */
  variantRounds: 9,
  warmupSeconds: Math.min(2, seconds),
  coldStartRuns: 3,
  notesToSave: 10_000,
  // Each used once, like the notes to delete: more than the floor, the functions and the variant
  // comparison can save in their runs.
  notesToSaveVersioned: 120_000,
  // More than both targets can delete in their runs, so no id is used twice.
  notesToDelete: 150_000,
  password: "bench-password-1",
  liveUpdates: liveUpdateSettings,
};

const log = (line: string) => console.log(line);

/** The environment of the stack, the floor and the cold-started functions alike. */
function serviceEnv(databaseUrl: string): Record<string, string> {
  // The stack's per-address login limit would stop a load test from one address after 30 logins.
  return { DATABASE_URL: databaseUrl, ...testSecrets, SUPABASE_ANON_KEY: testAnonKey, ...sharedStackLimits };
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
      notesToSaveVersioned: settings.notesToSaveVersioned,
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

/** Requests of one kind to one target. */
interface Load {
  origin: string;
  next: Scenario["next"];
}

/**
 * Two loads, both warmed up, then timed in `rounds` rounds of baseline,
 * subject, subject, baseline, so a drift in the machine's load weighs on both
 * alike, and a burst of load elsewhere on the machine spoils one round rather
 * than the comparison.
 */
async function alternate(
  baseline: Load,
  subject: Load,
  connections: number,
  rounds = settings.rounds,
): Promise<Round[]> {
  const segment = { connections, seconds: settings.seconds / (2 * settings.rounds) };
  const warmup = { ...segment, seconds: settings.warmupSeconds };
  await drive(baseline.origin, baseline.next, warmup);
  await drive(subject.origin, subject.next, warmup);
  const measured: Round[] = [];
  for (let round = 0; round < rounds; round++) {
    const baselineFirst = await drive(baseline.origin, baseline.next, segment);
    const subjectFirst = await drive(subject.origin, subject.next, segment);
    const subjectSecond = await drive(subject.origin, subject.next, segment);
    const baselineSecond = await drive(baseline.origin, baseline.next, segment);
    measured.push({ baseline: [baselineFirst, baselineSecond], stack: [subjectFirst, subjectSecond] });
  }
  return measured;
}

/** One side of a comparison: where it answers, and what the log calls it. */
interface Side {
  url: string;
  /** Empty for the functions, the subject the bench is about. */
  label: string;
}

/** Logs a comparison's verdict and how its rounds spread. */
function logComparison(name: string, comparison: Comparison, subject: string, baseline: string) {
  log(
    `  ${name}: ${comparison.stack.requestsPerSecond.toFixed(0)} req/s ${subject ? `${subject} ` : ""}vs ${baseline} ` +
      `${comparison.baseline.requestsPerSecond.toFixed(0)} (${comparison.requestsRatio.toFixed(2)}x; rounds ` +
      `${comparison.roundRatios.map((ratio) => ratio.toFixed(2)).join(", ")})`,
  );
}

/** Each scenario on `subject` against `baseline`: the functions against the floor, or one server against another. */
async function compareSides(subject: Side, baseline: Side, scenarios: Scenario[]): Promise<Comparison[]> {
  const comparisons: Comparison[] = [];
  for (const scenario of scenarios) {
    const rounds = await alternate(
      { origin: new URL(baseline.url).origin, next: scenario.next },
      { origin: new URL(subject.url).origin, next: scenario.next },
      connectionsOf(scenario),
    );
    const comparison = compare(scenario, rounds);
    logComparison(scenario.name, comparison, subject.label, baseline.label);
    comparisons.push(comparison);
  }
  return comparisons;
}

/** The scenarios on which the bench measures what the stack's bounded server costs: the lightest read and a write. */
const serverCostScenarios = ["notes-fetch limit 10", "notes-create"];

/** Each variant scenario against the scenario it is a variant of, both on the functions. */
async function compareVariants(stackUrl: string, scenarios: Scenario[]): Promise<Comparison[]> {
  const origin = new URL(stackUrl).origin;
  const comparisons: Comparison[] = [];
  for (const variant of scenarios) {
    const plain = scenarios.find((scenario) => scenario.name === variant.variantOf);
    if (!plain) continue;
    const rounds = await alternate(
      { origin, next: plain.next },
      { origin, next: variant.next },
      settings.connections,
      settings.variantRounds,
    );
    const comparison = compare(variant, rounds);
    logComparison(variant.name, comparison, "", plain.name);
    comparisons.push(comparison);
  }
  return comparisons;
}

/**
 * The function's login against the floor's login with the hash checked by a Postgres backend, as login worked
 * before hashing moved into the functions: what moving the hash costs or gains on this machine.
 */
async function compareLoginHashing(stackUrl: string, floorUrl: string, scenarios: Scenario[]): Promise<Comparison> {
  const login = scenarios.find((scenario) => scenario.kind === "login");
  if (!login) throw new Error("no login scenario");
  const rounds = await alternate(
    { origin: new URL(floorUrl).origin, next: () => ({ ...login.next(), path: loginHashInPostgresPath }) },
    { origin: new URL(stackUrl).origin, next: login.next },
    settings.loginConnections,
  );
  const comparison = compare(login, rounds, targets.loginHashing);
  logComparison(login.name, comparison, "", "the floor's login with the hash in Postgres");
  return comparison;
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

  log("Starting the stack and the floor");
  let stack: RunningStack | undefined;
  const floor = await startFloor(env);
  const { boundedUrl: boundedFloorUrl, bareUrl: bareFloorUrl } = floor;
  try {
    stack = await startStack({ databaseUrl, env });
    log("Load, per scenario:");
    // One set of scenarios for the whole run: their supplies of notes to save and delete are each used once.
    const scenarios = buildScenarios(fixtures);
    const comparisons = await compareSides(
      { url: stack.baseUrl, label: "" },
      { url: boundedFloorUrl, label: "floor" },
      scenarios,
    );
    log("The stack's bounded server against Deno.serve, both serving the floor:");
    const servers = await compareSides(
      { url: boundedFloorUrl, label: "bounded" },
      { url: bareFloorUrl, label: "Deno.serve" },
      scenarios.filter((scenario) => serverCostScenarios.includes(scenario.name)),
    );
    log("Variants against the plain request, on the functions:");
    const variants = await compareVariants(stack.baseUrl, scenarios);
    log("Login against the hash checked by Postgres, as before:");
    const loginHashing = await compareLoginHashing(stack.baseUrl, boundedFloorUrl, scenarios);
    log("Login flood: 300 concurrent logins for 12 s, and another user's notes calls beside them");
    const flood = await loginFlood(stack.baseUrl, {
      apiKey: testAnonKey,
      probeAuthorization: fixtures.users[0].authorization,
      connections: 300,
      seconds: 12,
    });
    await stack.stop();
    stack = undefined;
    await floor.stop();

    log(`Round trips: the stack behind a proxy adding ${settings.rttMs} ms per round trip`);
    const { roundTrips, firstPages } = await measureLatencies(databaseUrl, env, fixtures.heavyUser.authorization);

    log("Cold starts");
    const credentials = { authorization: fixtures.heavyUser.authorization, apiKey: testAnonKey };
    const coldStarts = await measureColdStarts(env, credentials, settings.coldStartRuns);

    log(`Live updates: sequential writes, then ${settings.liveUpdates.streams} open streams`);
    const liveUpdates = await measureLiveUpdates(databaseUrl, env, { apiKey: testAnonKey, ...settings.liveUpdates });
    for (const { wake, writeToEvent, openStreams } of liveUpdates) {
      log(
        `  ${wake}: write to event p50 ${writeToEvent.p50Ms.toFixed(1)} ms, p95 ${writeToEvent.p95Ms.toFixed(1)} ms; ` +
          (openStreams
            ? `${openStreams.streams} streams held ${JSON.stringify(openStreams.connectionsAfterWrite)}`
            : ""),
      );
    }
    return {
      comparisons,
      servers,
      variants,
      loginHashing,
      flood,
      roundTrips,
      firstPages,
      coldStarts,
      liveUpdates,
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
  // A real provider for the provider sign-in's calls, as `local`.
  const appUrl = "http://127.0.0.1:5173/";
  const { provider: identityProvider, env: providerEnv } = await identityProviderForStack([appUrl]);
  // The proxy's URL goes in env too: the stack's env would otherwise name the database directly.
  const stack = await startStack({
    env: { ...env, ...providerEnv, DATABASE_URL: proxy.route(databaseUrl) },
  }).catch(async (error) => {
    await identityProvider.stop();
    throw error;
  });
  try {
    const samples = settings.roundTripSamples;
    const roundTrips = await measureRoundTrips(stack.baseUrl, proxy, {
      apiKey: testAnonKey,
      rttMs: settings.rttMs,
      samples,
      grantAdmin: (email) => grantAdminRole(databaseUrl, email),
      verifyAddress: (email) => markVerified(databaseUrl, email),
      provider: { identityProvider, appUrl },
    });
    for (const row of roundTrips) log(`  ${row.endpoint}: ${row.roundTrips.toFixed(1)} round trips`);
    const firstPages = await measureFirstPages(stack.baseUrl, {
      apiKey: testAnonKey,
      samples,
      heavy: { authorization: heavyAuthorization, notes: seedPlan.heavyUserNotes },
    });
    for (const page of firstPages) {
      log(`  first page, ${page.listing}, ${page.heavyNotes} notes vs ${page.lightNotes}: ${page.ratio.toFixed(2)}x`);
    }
    return { roundTrips, firstPages };
  } finally {
    await stack.stop();
    await identityProvider.stop();
    await proxy.close();
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
  // Each on databases of its own (and the listing's also on PGlite), after the stack's load is gone.
  log("First pages before and after ANALYZE, on PostgreSQL and PGlite:");
  const listingPlans = await benchListingPlans();
  log("Bare inserts into public.notes (pgbench):");
  const writes = await benchWrites();
  log(`notes-create over ${functionPathSettings.users} users against pgbench of its transaction:`);
  const functionPath = await benchFunctionPath(settings.functionPathSeconds);
  log("Attachment uploads against the disk:");
  const uploads = await measureUploadThroughput({ mebibytes: 6, rounds: 5 });
  const { comparisons, servers, variants, loginHashing, flood, roundTrips, firstPages, coldStarts, liveUpdates } =
    postgresRun;
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
    servers,
    variants,
    loginHashing,
    loginFlood: flood,
    roundTrips,
    firstPages,
    coldStarts,
    liveUpdates,
    listingPlans,
    writes,
    functionPath,
    uploads,
  };
  const file = await writeResults(record, startedAt);

  console.log(`\n## PostgreSQL (${navigator.hardwareConcurrency} cores, ${version.split(" on ")[0]})\n`);
  console.log(loadTable(comparisons));
  console.log("\n## The stack's bounded server against Deno.serve, both serving the floor\n");
  console.log(serverTable(servers));
  console.log("\n## Variants against the plain request, both on the functions\n");
  console.log(variantTable(variants));
  console.log("\n## Login against the floor's login with the hash checked by Postgres (the design before)\n");
  console.log(loginHashingTable(loginHashing));
  const probe = flood.probeLatencies;
  console.log(
    `\n## Login flood (300 concurrent logins for 12 s)\n\nAnother user's notes-fetch beside it: ${probe.length} calls, ` +
      `answers ${JSON.stringify(flood.probeStatuses)}, p50 ${quantile(probe, 0.5).toFixed(0)} ms, ` +
      `p95 ${quantile(probe, 0.95).toFixed(0)} ms (target: all succeed, p95 < 1000 ms: ${
        Object.keys(flood.probeStatuses).every((status) => status === "200") && quantile(probe, 0.95) < 1000
          ? "met"
          : "MISSED"
      }). The flood's answers: ${JSON.stringify(flood.floodStatuses)}.`,
  );
  console.log(`\n## Round trips to Postgres per request (${settings.rttMs} ms added per round trip)\n`);
  console.log(roundTripTable(roundTrips, settings.rttMs));
  console.log("\n## First page (limit 10) of the heavy user against a 10-note user\n");
  console.log(markdownTable(
    ["Listing", "Query", "heavy ms", "10 notes ms", "Ratio", "Target"],
    firstPages.map((page) => [
      page.listing,
      `\`${page.query}\``,
      page.heavyMs.toFixed(2),
      page.lightMs.toFixed(2),
      `${page.ratio.toFixed(2)}x`,
      `${page.ratio <= page.target ? "met" : "MISSED"} (≤ ${page.target}x)`,
    ]),
  ));
  console.log("\n## First page of a 20,000-note import against a 10-note user, without statistics and with\n");
  console.log(listingPlanTable(listingPlans));
  console.log(`\n## Bare inserts into public.notes (pgbench, ${writeSettings.clients} clients, ratios in one run)\n`);
  console.log(writeCostTable(writes));
  console.log(
    `\n## notes-create over ${functionPathSettings.users} users against pgbench of its transaction ` +
      `(${settings.functionPathSeconds} s runs; target ≥ 0.85×)\n`,
  );
  console.log(functionPathTable(functionPath));
  console.log("\n## Cold start per function (target: < 150 ms)\n");
  console.log(coldStartTable(coldStarts));
  console.log("\n## From a write's answer to its event on another session's stream\n");
  console.log(writeToEventTable(liveUpdates));
  console.log(`\n## ${settings.liveUpdates.streams} streams of one user open at once\n`);
  console.log(openStreamsTable(liveUpdates));
  console.log("\n## Attachment upload throughput against the disk\n");
  console.log(uploadThroughputTable(uploads));
  console.log(`\nResults: ${file}`);

  const failed = [...comparisons, ...servers, ...variants, loginHashing].some((row) =>
    row.stack.failed > 0 || row.baseline.failed > 0
  );
  if (failed) {
    console.error("\nRequests failed; see above.");
    Deno.exit(1);
  }
}

await main();
