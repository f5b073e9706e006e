/**
 * Database access: one node-postgres pool per isolate in pipeline mode, and
 * transactions whose statements are all written before any answer is read,
 * so a whole transaction costs one round trip to Postgres however far away it
 * is. Notes statements run in `withCallerTransaction` (`caller-transactions.ts`),
 * which takes on the caller's identity the way PostgREST does, so row-level
 * security decides what the caller can touch.
 *
 * Pooler-safe by construction: only unnamed statements (Parse, Bind, Execute
 * and Sync travel together), no startup parameter beyond user, database and
 * `application_name`, and the statement timeout is set inside each
 * transaction. Supavisor and PgBouncer in transaction mode accept all of it.
 *
 * Every transaction ends by its request's database deadline (`http/request-deadline.ts`),
 * whatever it was waiting for: a pooled connection, a new one, or answers
 * from a database that went silent.
 *
 * @example
 * ```ts
 * const { account, session } = await withServiceTransaction(insertUser(registration));
 * ```
 */
// @ts-types="@types/pg"
import pg from "pg";
import { getConfig } from "../config/mod.ts";
import { databaseBudgetMs, databaseDeadline } from "../http/request-deadline.ts";
import { ServiceUnavailableError } from "../http/errors.ts";
import { isServerError, pgErrorCode, unavailableOr } from "./errors.ts";

/** One SQL statement with `$1`-style parameters. */
export interface Statement {
  readonly text: string;
  readonly values?: readonly unknown[];
  /** How the statement's columns are parsed, when not node-postgres's defaults. */
  readonly types?: pg.CustomTypesConfig;
}

/**
 * A statement and how its rows become the caller's result. Statements in
 * `following` run right after it, in the same transaction and round trip;
 * their rows are passed to `read` after its own.
 */
export interface Query<Row, Result> extends Statement {
  following?: readonly Statement[];
  read(rows: Row[], ...following: unknown[][]): Result;
  /**
   * Planner settings for this transaction, set just before the query is
   * planned and in the same round trip: for a statement whose best plan must
   * not hang on statistics that may not exist yet (see `listNotes`).
   */
  plannerSettings?: Readonly<Record<string, "on" | "off">>;
  /**
   * True for a query that writes notes: the caller's transaction then takes the
   * owner's account row first (`app.require_notes_writer()`), in the order a
   * deletion of the account takes its locks.
   */
  writesNotes?: true;
}

let pool: pg.Pool | undefined;

function createPool(): pg.Pool {
  const { databaseUrl, dbPoolMax } = getConfig();
  const created = new pg.Pool({
    connectionString: databaseUrl,
    application_name: "notes-service",
    max: dbPoolMax,
    idleTimeoutMillis: 30_000,
    // The request that asked has its answer by its deadline (`connect`); this ends the attempt it gave up on.
    connectionTimeoutMillis: databaseBudgetMs,
    // Each statement is sent without waiting for the answer to the one before.
    pipeline: true,
    keepAlive: true,
  });
  // An idle connection that the server or a pooler closes is dropped and replaced on demand.
  created.on("error", (error) => logDatabaseEvent("idle connection closed", error));
  return created;
}

function logDatabaseEvent(event: string, error: unknown): void {
  console.error(JSON.stringify({ level: "warn", event, error: errorName(error) }));
}

function errorName(error: unknown): string {
  return pgErrorCode(error) ?? (error instanceof Error ? error.message : String(error));
}

/** The shared pool, created on first use. */
function db(): pg.Pool {
  pool ??= createPool();
  return pool;
}

/** Closes the pool; the next `db()` opens a new one. */
export async function closeDb(): Promise<void> {
  const current = pool;
  pool = undefined;
  await current?.end();
}

/**
 * How long before the deadline a statement's own timeout fires: time enough for
 * Postgres to cancel a slow statement and say so (57014, a 503 on a connection
 * still fit for reuse) before the deadline gives up on a silent one.
 */
const serverCancelMarginMs = 500;

/** node-postgres reads a per-query `query_timeout` (`lib/client.js`) that its types leave out. */
type TimedQuery = pg.QueryConfig & { query_timeout: number };

/**
 * Runs `statements` as one transaction and returns each one's rows. BEGIN,
 * the statement timeout, the statements and COMMIT are written at once and
 * Postgres runs them in order, so the transaction costs one round trip. When
 * a statement fails, the ones after it fail with 25P02 and COMMIT rolls back;
 * the first failure is the one thrown, so nothing is half-written.
 */
export async function runTransaction(statements: readonly Statement[]): Promise<unknown[][]> {
  const { statementTimeoutMs } = getConfig();
  const deadline = databaseDeadline();
  const client = await connect(deadline);
  // While checked out, a connection error reaches the pending statements; this keeps it from also
  // being thrown as an unhandled 'error' event.
  const onError = (error: unknown) => logDatabaseEvent("connection closed during a transaction", error);
  client.on("error", onError);
  let connectionBroken = false;
  try {
    const timeLeftMs = Math.floor(deadline - performance.now());
    // Too little time left for Postgres to run a statement and answer: 503 now, rather than at the deadline.
    if (timeLeftMs <= serverCancelMarginMs) throw new ServiceUnavailableError({ cause: deadlinePassed });
    // A slow statement is cancelled by Postgres before the deadline, never later than the configured timeout.
    const statementTimeout = Math.min(statementTimeoutMs, timeLeftMs - serverCancelMarginMs);
    // An answer not back by then (a silent server, or a pooler waiting on one) is not coming: the query fails
    // with "Query read timeout", and node-postgres destroys the connection, failing the rest of the pipeline.
    const timed = ({ text, values, types }: Statement): TimedQuery => ({
      text,
      values: values as unknown[] | undefined,
      types,
      query_timeout: statementTimeout + serverCancelMarginMs,
    });
    const sent = sendCorked(client, () =>
      [
        { text: "begin" },
        { text: "select set_config('statement_timeout', $1, true)", values: [String(statementTimeout)] },
        ...statements,
        { text: "commit" },
      ].map((statement) => client.query(timed(statement))));
    const settled = await Promise.allSettled(sent);
    const failure = settled.find((result) => result.status === "rejected");
    if (failure) {
      connectionBroken = !isServerError(failure.reason);
      throw unavailableOr(failure.reason);
    }
    return settled.slice(2, -1).map((result) => (result as PromiseFulfilledResult<pg.QueryResult>).value.rows);
  } finally {
    client.off("error", onError);
    // A broken connection is destroyed rather than handed to the next request.
    client.release(connectionBroken);
  }
}

/**
 * Runs `send` with the connection's socket corked. In pipeline mode
 * node-postgres writes each protocol message of each query (Parse, Bind,
 * Describe, Execute, Sync) to the socket as it is issued, one write call
 * apiece; corked, the whole transaction leaves in one write.
 */
function sendCorked<T>(client: pg.PoolClient, send: () => T): T {
  const socket = client.connection.stream;
  socket.cork();
  try {
    return send();
  } finally {
    socket.uncork();
  }
}

/** Why a request was answered 503 without an answer from the database: its time ran out first. */
const deadlinePassed = new Error("the request's database deadline passed");

/**
 * A connection from the pool, pooled or new, by `deadline`. One that comes
 * later goes back to the pool, for the requests after this one.
 */
async function connect(deadline: number): Promise<pg.PoolClient> {
  const connecting = db().connect();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new ServiceUnavailableError({ cause: deadlinePassed })),
      deadline - performance.now(),
    );
  });
  try {
    return await Promise.race([connecting, late]);
  } catch (error) {
    connecting.then((client) => client.release(), () => {});
    throw unavailableOr(error);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs one query in its own transaction, as the connection's own role (for the
 * account tables). `guards` run first, in order, in the same round trip; when
 * one fails (a rate limit reached, a revoked caller), the query never takes
 * effect. A guard can also change who runs the query: `withCallerTransaction`'s
 * takes on the caller's role and claims.
 */
export async function withServiceTransaction<Row, Result>(
  query: Query<Row, Result>,
  ...guards: Statement[]
): Promise<Result> {
  const settings = Object.entries(query.plannerSettings ?? {});
  const before = settings.length === 0 ? [] : [{
    text: `select ${settings.map((_, index) => `set_config($${2 * index + 1}, $${2 * index + 2}, true)`).join(", ")}`,
    values: settings.flat(),
  }];
  const statements = [...guards, ...before, query, ...(query.following ?? [])];
  const [rows, ...following] = (await runTransaction(statements)).slice(guards.length + before.length);
  return query.read(rows as Row[], ...following);
}
