/**
 * The function path against the database's own rate for the same work:
 * `notes-create` over many users, driven by autocannon at a fixed
 * concurrency, against pgbench running the transaction the function sends
 * (`db/transactions.ts`): `begin`, the statement timeout, the caller's check
 * with their token's claims, the insert, `commit`, pipelined in one round
 * trip as the pool sends it, with extended-protocol parameters as the driver
 * binds them, for a random one of the same users. pgbench has as many clients
 * as the stack's pool has connections, so both sides hold the same number of
 * transactions open. Rounds alternate the two (pgbench, function, function,
 * pgbench) and the ratio is the median of the rounds'.
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
 * const path = await measureFunctionPath({ databaseUrl, stackUrl, users, poolSize: 5, seconds: 10, rounds: 3 });
 * ```
 */
import { decodeJwt } from "jose";
import postgres from "postgres";
import { runPgbench, tpsOf } from "./pgbench.ts";
import { median } from "./load.ts";
import { runWrk } from "./wrk.ts";
import { markdownTable } from "./report.ts";
import { type SignedInUser, signedInUsers } from "./operator.ts";
import {
  createScratchDatabase,
  sharedStackLimits,
  startStack,
  testAnonKey,
  testSecrets,
} from "../dev/harness/stack.ts";
import { migrate } from "../dev/migrate.ts";
import { loadConfig } from "../supabase/functions/_shared/config/mod.ts";
import { notesCallerCheck } from "../supabase/functions/_shared/db/caller-transactions.ts";
import { insertNote } from "../supabase/functions/_shared/queries/notes.ts";

export const functionPathSettings = { users: 1_000, rounds: 3 };

export interface FunctionPathInput {
  databaseUrl: string;
  /** The stack's functions base URL (`.../functions/v1`). */
  stackUrl: string;
  users: SignedInUser[];
  /** The stack's `DB_POOL_MAX`: pgbench's clients. */
  poolSize: number;
  /** autocannon's connections: more than the pool, so requests queue for it as they do under load. */
  connections: number;
  seconds: number;
  rounds: number;
  /** The statement timeout the function sets (`STATEMENT_TIMEOUT_MS`), sent as it sends it. */
  statementTimeoutMs: number;
}

export interface FunctionPathResult {
  users: number;
  functionRps: number[];
  databaseTps: number[];
  ratios: number[];
  ratio: number;
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

async function pgbenchTps(databaseUrl: string, script: string, clients: number, seconds: number): Promise<number> {
  const file = await Deno.makeTempFile({ suffix: ".sql" });
  try {
    await Deno.writeTextFile(file, script);
    const args = ["-M", "extended", "-c", String(clients), "-j", String(clients), "-T", String(seconds)];
    return tpsOf(await runPgbench(new URL(databaseUrl), file, args, { cwd: Deno.cwd() }));
  } finally {
    await Deno.remove(file);
  }
}

async function functionRps(input: FunctionPathInput): Promise<number> {
  const { requestsPerSecond, failed } = await runWrk(`${input.stackUrl}/notes-create`, {
    method: "POST",
    body: JSON.stringify({ title, content }),
    authorizations: input.users.map((user) => user.authorization),
    connections: input.connections,
    seconds: input.seconds,
  });
  if (failed > 0) throw new Error(`notes-create failed ${failed} times`);
  return requestsPerSecond;
}

/** Rounds of pgbench, function, function, pgbench; the ratio of each round and their median. */
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
  // A warm-up of each: the stack's pool open and its modules compiled, the server's caches filled.
  await pgbenchTps(input.databaseUrl, script, input.poolSize, 2);
  await functionRps({ ...input, seconds: 2 });
  const result: FunctionPathResult = {
    users: input.users.length,
    functionRps: [],
    databaseTps: [],
    ratios: [],
    ratio: 0,
  };
  for (let round = 0; round < input.rounds; round++) {
    const first = await pgbenchTps(input.databaseUrl, script, input.poolSize, input.seconds);
    const rps = [await functionRps(input), await functionRps(input)];
    const last = await pgbenchTps(input.databaseUrl, script, input.poolSize, input.seconds);
    const tps = (first + last) / 2;
    const functions = (rps[0] + rps[1]) / 2;
    result.databaseTps.push(tps);
    result.functionRps.push(functions);
    result.ratios.push(functions / tps);
  }
  result.ratio = median(result.ratios);
  return result;
}

/** The function path's result as a Markdown table. */
export function functionPathTable(result: FunctionPathResult): string {
  return markdownTable(
    ["Round", "notes-create req/s", "pgbench tps of its transaction", "Ratio"],
    [
      ...result.ratios.map((ratio, round) => [
        String(round + 1),
        result.functionRps[round].toFixed(0),
        result.databaseTps[round].toFixed(0),
        `${ratio.toFixed(2)}×`,
      ]),
      ["median", "", "", `${result.ratio.toFixed(2)}×`],
    ],
  );
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
    const stack = await startStack({ env });
    try {
      return await measureFunctionPath({
        databaseUrl,
        stackUrl: stack.baseUrl,
        users,
        poolSize: config.dbPoolMax,
        connections: 2 * config.dbPoolMax,
        seconds,
        rounds: functionPathSettings.rounds,
        statementTimeoutMs: config.statementTimeoutMs,
      });
    } finally {
      await stack.stop();
    }
  } finally {
    await scratch?.drop();
  }
}
