/**
 * The function path against the database's own rate for the same work:
 * `notes-create` over many users, driven by wrk at a fixed concurrency,
 * against pgbench running the transaction the function sends
 * (`db/transactions.ts`): `begin`, the statement timeout, the caller's check
 * with their token's claims, the insert, `commit`, pipelined in one round
 * trip as the pool sends it, with extended-protocol parameters as the driver
 * binds them, for a random one of the same users. pgbench has as many clients
 * as the stack's pool has connections, so both sides hold the same number of
 * transactions open. Rounds alternate the two (pgbench, function, ...,
 * function, pgbench) and the ratio is the median of the rounds'. Between the
 * two function runs of a round run four of the floor (`bench/baseline/server.ts`):
 * the same transaction through the same pool, the claims read from the token
 * unchecked, the body taken on trust, no envelope and no log line, started with
 * the stack's Deno flags. Two run on the stack's own HTTP server
 * (`dev/bounded-server.ts`), so what separates the function from them is the
 * service's code alone; two on a bare `Deno.serve`, whose ratio to pgbench is
 * what Deno, the driver and the pool allow on this machine, so what separates
 * the two floors is the local server. Both load generators
 * are in C, so neither side pays for its driver's CPU more than the other
 * (autocannon, in Node, spends a large share of a core of its own), and in
 * the middle of each run the CPU time per request of the stack, of the
 * database's server processes and of the driver is read from /proc: on a
 * machine whose cores the three share, that is where the time goes.
 *
 * pgbench cannot bind a different user's claims from a list, so its
 * transaction reads them, and the owner, from a table of the users by a
 * random number, inside the statements the function sends with them as
 * parameters: a primary-key lookup of a 1,000-row table, which the function
 * does not make, so the ratio is if anything kind to pgbench.
 *
 * `benchFunctionPath` does it on a fresh database of its own (1,000 verified users with live sessions and no notes) and
 * a stack on it, for `npm run bench` and `npm run bench:function-path`.
 *
 * @example
 * ```ts
 * const path = await measureFunctionPath({ databaseUrl, stack, boundedFloor, floor, users, poolSize: 5, seconds: 10, ... });
 * ```
 */
import { decodeJwt } from "jose";
import postgres from "postgres";
import { runPgbench, tpsOf } from "./pgbench.ts";
import { median } from "./load.ts";
import { runWrk } from "./wrk.ts";
import { backendPids, cpuPerSecondDuring, pidsNamed } from "./process-cpu.ts";
import { markdownTable } from "./report.ts";
import { profileDuring, type ProfileSummary, profileTable, summarizeProfile } from "./cpu-profile.ts";
import { type SignedInUser, signedInUsers } from "./operator.ts";
import {
  createScratchDatabase,
  sharedStackLimits,
  startStack,
  testAnonKey,
  testSecrets,
} from "../dev/harness/stack.ts";
import { migrate } from "../dev/migrate.ts";
import { startFloor } from "./floor.ts";
import { loadConfig } from "../supabase/functions/_shared/config/mod.ts";
import { notesCallerCheck } from "../supabase/functions/_shared/db/caller-transactions.ts";
import { insertNote } from "../supabase/functions/_shared/queries/notes.ts";

export const functionPathSettings = { users: 1_000, rounds: 3 };

/** A server wrk drives: its functions base URL (`.../functions/v1`) and its process, whose CPU time is counted. */
export interface ServerUnderLoad {
  name: "stack" | "floor on the stack's server" | "floor on Deno.serve";
  url: string;
  pid: number;
}

export interface FunctionPathInput {
  databaseUrl: string;
  /**
   * The stack; the floor on the stack's own HTTP server (`dev/bounded-server.ts`), which differs from the stack
   * only in the service's code; and the floor on a bare `Deno.serve`, which differs from pgbench only in Deno, the
   * driver and HTTP.
   */
  stack: ServerUnderLoad;
  boundedFloor: ServerUnderLoad;
  floor: ServerUnderLoad;
  users: SignedInUser[];
  /** The stack's `DB_POOL_MAX`: pgbench's clients. */
  poolSize: number;
  /** wrk's connections: more than the pool, so requests queue for it as they do under load. */
  connections: number;
  seconds: number;
  rounds: number;
  /** The statement timeout the function sets (`STATEMENT_TIMEOUT_MS`), sent as it sends it. */
  statementTimeoutMs: number;
}

/** CPU milliseconds per request (or per pgbench transaction) of each part, in the middle of a timed run. */
export interface CpuPerRequest {
  /** The process that answered the requests (the stack, or the floor), all its threads: none for pgbench. */
  server: number;
  /** The database's server processes. */
  postgres: number;
  /** The load generator: wrk for the functions, pgbench for the database. */
  driver: number;
}

/** One side's rounds: per round, the mean rate of its runs (requests, or pgbench transactions, per second) and CPU. */
export interface Rounds {
  rates: number[];
  cpu: CpuPerRequest[];
}

/** A server's rounds, with each round's rate over pgbench's in the same round, and their median. */
export interface ServerRounds extends Rounds {
  ratios: number[];
  ratio: number;
}

export interface FunctionPathResult {
  users: number;
  /** pgbench of the function's transaction. */
  database: Rounds;
  /** `notes-create` on the stack, and on the floor on the stack's server and on `Deno.serve` (`FunctionPathInput`). */
  stack: ServerRounds;
  boundedFloor: ServerRounds;
  floor: ServerRounds;
  /** Where the stack's CPU went in one more run, on a stack of its own started with its inspector open. */
  profile?: ProfileSummary;
}

const claimsTable = "bench_function_path_claims";
const title = "Benchmark note";
const content = "Written by the benchmark.";

/** The token's payload as the function passes it to Postgres: the claims' JSON. */
function claimsOf(authorization: string): string {
  return JSON.stringify(decodeJwt(authorization.replace(/^Bearer\s+/i, "")));
}

/**
 * The function's transaction for user number `:n`, as pgbench runs it: the texts of its statements
 * (`runTransaction`'s begin, timeout and commit around the caller's check and the insert), with the user's claims
 * and id read by number where the function binds them.
 */
function transactionScript(users: number, statementTimeoutMs: number): string {
  const check = notesCallerCheck({ sub: "", role: "authenticated" }, true).text
    .replace("$1", `(select claims from ${claimsTable} where n = :n)`);
  const insert = insertNote("", { title, content, status: "DRAFT" }).text
    .replace("$1", `(select user_id from ${claimsTable} where n = :n)`)
    .replace("$2", `'${title}'`)
    .replace("$3", `'${content}'`)
    .replace("$4", "'DRAFT'");
  return [
    `\\set n random(1, ${users})`,
    "\\startpipeline",
    "begin;",
    `select set_config('statement_timeout', '${statementTimeoutMs}', true);`,
    `${check.replace(/\s+/g, " ")};`,
    `${insert.replace(/\s+/g, " ")};`,
    "commit;",
    "\\endpipeline",
    "",
  ].join("\n");
}

/** A timed run's rate and what each part spent on a request of it. */
interface Run {
  rate: number;
  cpu: CpuPerRequest;
}

/**
 * Runs `load` (which answers its rate) while counting the CPU time of the server process `serverPid` (none for
 * pgbench), the database and `driver`.
 */
async function countingCpu(
  input: Pick<FunctionPathInput, "databaseUrl" | "seconds">,
  sql: postgres.Sql,
  driver: string,
  serverPid: number | undefined,
  load: Promise<number>,
): Promise<Run> {
  const database = new URL(input.databaseUrl).pathname.slice(1);
  const { result: rate, cpuPerSecond } = await cpuPerSecondDuring(load, input.seconds, {
    server: () => Promise.resolve(serverPid === undefined ? [] : [serverPid]),
    postgres: () => backendPids(sql, database),
    driver: () => pidsNamed(driver),
  });
  const perRequest = (name: string) => cpuPerSecond[name] / rate;
  return {
    rate,
    cpu: { server: perRequest("server"), postgres: perRequest("postgres"), driver: perRequest("driver") },
  };
}

async function pgbenchRun(input: FunctionPathInput, sql: postgres.Sql, script: string): Promise<Run> {
  const file = await Deno.makeTempFile({ suffix: ".sql" });
  try {
    await Deno.writeTextFile(file, script);
    const clients = String(input.poolSize);
    const args = ["-M", "extended", "-c", clients, "-j", clients, "-T", String(input.seconds)];
    const tps = runPgbench(new URL(input.databaseUrl), file, args, { cwd: Deno.cwd() }).then(tpsOf);
    return await countingCpu(input, sql, "pgbench", undefined, tps);
  } finally {
    await Deno.remove(file);
  }
}

/** The load wrk puts on a server, with how long it runs. */
type WrkLoad = Pick<FunctionPathInput, "databaseUrl" | "users" | "connections" | "seconds">;

/** wrk on `notes-create` of `server`. */
async function functionRun(input: WrkLoad, sql: postgres.Sql, server: ServerUnderLoad): Promise<Run> {
  const rps = runWrk(`${server.url}/notes-create`, {
    method: "POST",
    body: JSON.stringify({ title, content }),
    authorizations: input.users.map((user) => user.authorization),
    connections: input.connections,
    seconds: input.seconds,
  }).then(({ requestsPerSecond, failed }) => {
    if (failed > 0) throw new Error(`notes-create of the ${server.name} failed ${failed} times`);
    return requestsPerSecond;
  });
  return await countingCpu(input, sql, "wrk", server.pid, rps);
}

/** The mean of runs' CPU per request, part by part. */
function meanCpu(runs: Run[]): CpuPerRequest {
  const mean = (part: keyof CpuPerRequest) => runs.reduce((sum, run) => sum + run.cpu[part], 0) / runs.length;
  return { server: mean("server"), postgres: mean("postgres"), driver: mean("driver") };
}

/** The mean rate of runs. */
function meanRate(runs: Run[]): number {
  return runs.reduce((sum, run) => sum + run.rate, 0) / runs.length;
}

type Server = "stack" | "boundedFloor" | "floor";
type Side = "database" | Server;

/**
 * The runs of one round, in order: each server's two runs are spread around the round's middle, so a change in the
 * machine's speed during the round weighs on every side alike.
 */
const roundOrder: readonly Side[] = [
  "database",
  "stack",
  "floor",
  "boundedFloor",
  "boundedFloor",
  "floor",
  "stack",
  "database",
];

/** Rounds of `roundOrder`; each round's ratios to pgbench and their medians. */
export async function measureFunctionPath(input: FunctionPathInput): Promise<FunctionPathResult> {
  const sql = postgres(input.databaseUrl, { max: 1, onnotice: () => {} });
  try {
    await sql`create table if not exists ${sql(claimsTable)} (n integer primary key, user_id uuid, claims text)`;
    await sql`truncate ${sql(claimsTable)}`;
    await sql`insert into ${sql(claimsTable)} ${
      sql(input.users.map((user, index) => ({ n: index + 1, user_id: user.id, claims: claimsOf(user.authorization) })))
    }`;
  } finally {
    await sql.end({ timeout: 5 });
  }
  const script = transactionScript(input.users.length, input.statementTimeoutMs);
  const sampler = postgres(input.databaseUrl, { max: 1, onnotice: () => {} });
  const measure = (side: Side, seconds = input.seconds) =>
    side === "database"
      ? pgbenchRun({ ...input, seconds }, sampler, script)
      : functionRun({ ...input, seconds }, sampler, input[side]);
  try {
    // A warm-up of each: the stack's pool open and its modules compiled, the server's caches filled.
    for (const side of new Set(roundOrder)) await measure(side, 2);
    const rounds: { side: Side; run: Run }[][] = [];
    for (let round = 0; round < input.rounds; round++) {
      const runs: { side: Side; run: Run }[] = [];
      for (const side of roundOrder) runs.push({ side, run: await measure(side) });
      rounds.push(runs);
    }
    const summed = (side: Side): Rounds => {
      const runsOf = rounds.map((runs) => runs.filter((made) => made.side === side).map((made) => made.run));
      return { rates: runsOf.map(meanRate), cpu: runsOf.map(meanCpu) };
    };
    const database = summed("database");
    const againstDatabase = (server: Server): ServerRounds => {
      const own = summed(server);
      const ratios = own.rates.map((rate, round) => rate / database.rates[round]);
      return { ...own, ratios, ratio: median(ratios) };
    };
    return {
      users: input.users.length,
      database,
      stack: againstDatabase("stack"),
      boundedFloor: againstDatabase("boundedFloor"),
      floor: againstDatabase("floor"),
    };
  } finally {
    await sampler.end({ timeout: 5 });
  }
}

/**
 * The function path's result as Markdown tables: rates and ratios, CPU milliseconds per request of each part, and
 * the profile.
 */
export function functionPathTable(result: FunctionPathResult): string {
  const ms = (value: number) => value.toFixed(2);
  const profile = result.profile
    ? `\n\nThe stack's CPU in one more run (${result.profile.busyMs.toFixed(0)} ms busy):\n\n${
      profileTable(result.profile)
    }`
    : "";
  const cpu = (parts: CpuPerRequest) => `${ms(parts.server)} / ${ms(parts.postgres)} / ${ms(parts.driver)}`;
  const x = (ratio: number) => `${ratio.toFixed(2)}×`;
  // In the columns' order: the function, the floor on the stack's server, the floor on `Deno.serve`.
  const servers = [result.stack, result.boundedFloor, result.floor];
  return markdownTable(
    [
      "Round",
      "req/s: notes-create / floor on the stack's server / floor on Deno.serve",
      "pgbench tps of its transaction",
      "Ratio to pgbench: function / floor on the stack's server / floor on Deno.serve",
      "CPU ms per request, function: stack / Postgres / wrk",
      "floor on the stack's server",
      "floor on Deno.serve",
      "CPU ms per transaction: Postgres / pgbench",
    ],
    [
      ...result.database.rates.map((tps, round) => [
        String(round + 1),
        servers.map((server) => server.rates[round].toFixed(0)).join(" / "),
        tps.toFixed(0),
        servers.map((server) => x(server.ratios[round])).join(" / "),
        ...servers.map((server) => cpu(server.cpu[round])),
        `${ms(result.database.cpu[round].postgres)} / ${ms(result.database.cpu[round].driver)}`,
      ]),
      ["median", "", "", servers.map((server) => x(server.ratio)).join(" / "), "", "", "", ""],
    ],
  ) + profile;
}

/** A port nothing listens on now, for a process that must be told its port before it starts. */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  listener.close();
  return (listener.addr as Deno.NetAddr).port;
}

/**
 * A CPU profile of a stack of its own, started with its inspector open (not the measured one, which runs as
 * `npm start` does), over a warm-up and then one run of `seconds` of the same load.
 */
async function profileStack(
  input: WrkLoad,
  env: Record<string, string>,
) {
  const port = freePort();
  const stack = await startStack({ env, denoFlags: [`--inspect=127.0.0.1:${port}`] });
  const sampler = postgres(input.databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const server: ServerUnderLoad = { name: "stack", url: stack.baseUrl, pid: stack.pid };
    await functionRun({ ...input, seconds: 2 }, sampler, server);
    const { profile } = await profileDuring(port, () => functionRun(input, sampler, server));
    return summarizeProfile(profile);
  } finally {
    await sampler.end({ timeout: 5 });
    await stack.stop();
  }
}

/**
 * `notes-create` over `functionPathSettings.users` users against pgbench of its transaction, in timed runs of
 * `seconds`, on a fresh database (DATABASE_URL's empty one when given) and a stack of its own on it.
 */
export async function benchFunctionPath(seconds: number): Promise<FunctionPathResult> {
  const given = Deno.env.get("DATABASE_URL");
  const scratch = given ? undefined : await createScratchDatabase("notes_function_path");
  const databaseUrl = given ?? scratch?.url ?? "";
  try {
    await migrate(databaseUrl, () => {});
    const env = { ...testSecrets, SUPABASE_ANON_KEY: testAnonKey, ...sharedStackLimits, DATABASE_URL: databaseUrl };
    const config = loadConfig(new Map(Object.entries(env)));
    const users = await signedInUsers(databaseUrl, functionPathSettings.users, "path");
    const load = {
      databaseUrl,
      users,
      poolSize: config.dbPoolMax,
      connections: 2 * config.dbPoolMax,
      seconds,
      rounds: functionPathSettings.rounds,
      statementTimeoutMs: config.statementTimeoutMs,
    };
    const stack = await startStack({ env });
    let result: FunctionPathResult;
    try {
      const floor = await startFloor(env);
      try {
        result = await measureFunctionPath({
          ...load,
          stack: { name: "stack", url: stack.baseUrl, pid: stack.pid },
          boundedFloor: { name: "floor on the stack's server", url: floor.boundedUrl, pid: floor.pid },
          floor: { name: "floor on Deno.serve", url: floor.bareUrl, pid: floor.pid },
        });
      } finally {
        await floor.stop();
      }
    } finally {
      await stack.stop();
    }
    return { ...result, profile: await profileStack(load, env) };
  } finally {
    await scratch?.drop();
  }
}
