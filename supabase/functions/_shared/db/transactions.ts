/**
 * Database access: one node-postgres pool per isolate in pipeline mode, and
 * transactions whose statements are all written before any answer is read,
 * so a whole transaction costs one round trip to Postgres however far away it
 * is. Notes statements run in `withCallerTransaction`, which takes on the
 * caller's identity the way PostgREST does, so row-level security decides what
 * the caller can touch.
 *
 * Pooler-safe by construction: only unnamed statements (Parse, Bind, Execute
 * and Sync travel together), no startup parameter beyond user, database and
 * `application_name`, and the statement timeout is set inside each
 * transaction. Supavisor and PgBouncer in transaction mode accept all of it.
 *
 * Every transaction ends by its request's database deadline (`db/deadline.ts`),
 * whatever it was waiting for: a pooled connection, a new one, or answers
 * from a database that went silent.
 *
 * @example
 * ```ts
 * const note = await withCallerTransaction(caller, insertNote(caller.sub, body));
 * ```
 */
// @ts-types="@types/pg"
import pg from "pg";
import { getConfig } from "../config/mod.ts";
import { databaseBudgetMs, databaseDeadline } from "./deadline.ts";
import { ForbiddenError, InvalidTokenError, ServiceUnavailableError } from "../http/errors.ts";

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
  const statements = [...guards, query, ...(query.following ?? [])];
  const [rows, ...following] = (await runTransaction(statements)).slice(guards.length);
  return query.read(rows as Row[], ...following);
}

/** Claims as PostgREST hands them to Postgres in `request.jwt.claims`. */
export interface CallerClaims {
  sub: string;
  role: "authenticated";
  [claim: string]: unknown;
}

/** SQLSTATE of `app.require_active_caller()`: the token is revoked or its user inactive or gone. */
const revokedCaller = "PT401";
/** SQLSTATE of `app.require_notes_caller()`: the database requires a verified address and the caller's is not. */
const unverifiedCaller = "PT403";
/** SQLSTATE of `app.require_admin()`: the caller's account does not have the role ADMIN. */
const notAdmin = "PTADM";
/** SQLSTATE of a write that refers to a row that is gone. */
const foreignKeyViolation = "23503";

/**
 * Runs `query` in a transaction as role `authenticated` with the caller's JWT
 * claims set locally, in one statement as PostgREST does, so `auth.uid()` and
 * the notes policies see the caller. The same statement checks in Postgres
 * that the caller still exists, is ACTIVE, holds a token of the account's
 * current version and that the token's session is live; if not, `query`
 * never takes effect and this throws a 401. While the database requires
 * verified addresses (`app.settings`, REQUIRE_EMAIL_VERIFICATION) it also
 * requires the caller's (else 403), as the notes policies do for every route.
 * All of it is one round trip.
 */
export function withCallerTransaction<Row, Result>(
  claims: CallerClaims,
  query: Query<Row, Result>,
): Promise<Result> {
  // The CTE holds volatile calls, so Postgres runs it (and sets the claims) before the check reads them.
  return guardedByCaller(query, {
    text: `with session as (
             select set_config('role', 'authenticated', true),
                    set_config('request.jwt.claims', $1, true)
           )
           select app.require_notes_caller() from session`,
    values: [JSON.stringify(claims)],
  }).catch((error) => {
    // The account was deleted after the check passed, before a write that refers to it (its note count, a create
    // key): as for a token of an account that is gone.
    if (pgErrorCode(error) === foreignKeyViolation) throw new InvalidTokenError("token_revoked");
    throw error;
  });
}

/**
 * Runs `query` as the connection's own role (for the account tables), behind
 * the same check of the caller as `withCallerTransaction`, in one round trip:
 * the statements of auth endpoints that act for a signed-in caller (sign-out,
 * the sessions list, the user record).
 */
export function withLiveCaller<Row, Result>(
  claims: CallerClaims,
  query: Query<Row, Result>,
  ...guards: Statement[]
): Promise<Result> {
  return guardedByCaller(query, {
    text: `with session as (select set_config('request.jwt.claims', $1, true))
           select app.require_active_caller() from session`,
    values: [JSON.stringify(claims)],
  }, ...guards);
}

/** Where an admin's request comes from, recorded with the security events its statement causes. */
export interface AdminContext {
  address: string | undefined;
  userAgent: string | undefined;
}

/**
 * Runs `query` as the connection's own role behind `app.require_admin()`: the
 * caller's session must be live and its account ACTIVE and an ADMIN now, read
 * in the same round trip, so a revoked admin is refused on its next request
 * (403 `admin_required`) whatever its token says. The same statement names the
 * admin as the actor of every security event the query causes.
 */
export function withAdminCaller<Row, Result>(
  claims: CallerClaims,
  context: AdminContext,
  query: Query<Row, Result>,
): Promise<Result> {
  return guardedByCaller(query, {
    text: `with acting as (
             select set_config('request.jwt.claims', $1, true),
                    set_config('app.audit_actor', $2, true),
                    set_config('app.audit_address', $3, true),
                    set_config('app.audit_user_agent', $4, true)
           )
           select app.require_admin() from acting`,
    values: [JSON.stringify(claims), claims.sub, context.address ?? "", context.userAgent ?? ""],
  });
}

async function guardedByCaller<Row, Result>(
  query: Query<Row, Result>,
  callerCheck: Statement,
  ...guards: Statement[]
): Promise<Result> {
  try {
    return await withServiceTransaction(query, callerCheck, ...guards);
  } catch (error) {
    if (pgErrorCode(error) === revokedCaller) throw new InvalidTokenError("token_revoked");
    if (pgErrorCode(error) === unverifiedCaller) {
      throw new ForbiddenError("email_not_verified", "Email address not verified");
    }
    if (pgErrorCode(error) === notAdmin) throw new ForbiddenError("admin_required", "Admin role required");
    throw error;
  }
}

/** SQLSTATEs that mean the database is overloaded or going away, not that the statement is wrong. */
const unavailableStates = new Set([
  "57014", // query_canceled: the statement timeout fired
  "57P01", // admin_shutdown
  "57P03", // cannot_connect_now: the server is starting or stopping
  "53300", // too_many_connections
  "08000", // connection_exception, and the pooler's own refusals below
  "08003",
  "08006",
]);

/** An error that Postgres itself sent: the connection that carried it is still usable. */
function isServerError(error: unknown): boolean {
  return error instanceof pg.DatabaseError;
}

/** How Node and node-postgres report a connection that failed, closed or stopped answering. */
const connectionFailureCodes = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH"]);
const connectionFailureMessages = [
  "Connection terminated", // closed by the server, a pooler or the network, or the connect timeout
  "timeout exceeded when trying to connect", // the pool found no connection within its timeout
  "Query read timeout", // no answer by the statement timeout and its margin (a silent database)
  "not queryable", // a connection that already failed
];

/** True for errors that mean the database is unreachable or overloaded, not that the statement is wrong. */
function isUnavailable(error: unknown): boolean {
  if (isServerError(error)) return unavailableStates.has(pgErrorCode(error) ?? "");
  if (!(error instanceof Error)) return false;
  return connectionFailureCodes.has(pgErrorCode(error) ?? "") ||
    connectionFailureMessages.some((message) => error.message.includes(message));
}

function unavailableOr(error: unknown): unknown {
  return isUnavailable(error) ? new ServiceUnavailableError({ cause: error }) : error;
}

/** True when `error` is Postgres refusing a duplicate key (unique_violation). */
export function isUniqueViolation(error: unknown): boolean {
  return pgErrorCode(error) === "23505";
}

/** True when `error` is Postgres refusing a row because of constraint `constraint` (any integrity violation). */
export function violatesConstraint(error: unknown, constraint: string): boolean {
  const integrityViolation = pgErrorCode(error)?.startsWith("23") ?? false;
  return integrityViolation && error instanceof pg.DatabaseError && error.constraint === constraint;
}

/** The Postgres error code of a driver error, if it has one. */
export function pgErrorCode(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : undefined;
}
