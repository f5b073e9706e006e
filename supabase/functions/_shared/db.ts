/**
 * Database access through one postgres.js pool per isolate. Notes queries run
 * in `withCallerTransaction`, which takes on the caller's identity the way
 * PostgREST does, so row-level security decides what the caller can touch.
 *
 * @example
 * ```ts
 * const rows = await withCallerTransaction(claims, (tx) => tx`select * from public.notes`);
 * ```
 */
import postgres from "postgres";
import { getConfig } from "./config.ts";
import { ServiceUnavailableError, UnauthorizedError } from "./http-error.ts";

export type Sql = postgres.Sql;
export type TransactionSql = postgres.TransactionSql;

let pool: Sql | undefined;

/**
 * postgres.js 3.4 can throw from a timer when a connection closes while a
 * small write is queued (porsager/postgres#1154 and #1208; the fixes, #1168
 * and #1209, are not released). By then the statement has already been
 * rejected with CONNECTION_CLOSED, which the caller handles, so the write is
 * moot, but an exception thrown from a timer would end the whole isolate.
 * This contains exactly that error; any other uncaught error still ends it.
 */
function containWriteAfterClose(event: ErrorEvent): void {
  const { error } = event;
  if (
    error instanceof TypeError && error.message.includes("reading 'write'") &&
    String(error.stack).includes("nextWrite")
  ) {
    event.preventDefault();
    console.error(JSON.stringify({ level: "warn", event: "database connection closed during a write" }));
  }
}

/** The shared pool, created on first use. */
export function db(): Sql {
  if (!pool) {
    globalThis.addEventListener("error", containWriteAfterClose);
    const { databaseUrl, dbPoolMax, statementTimeoutMs } = getConfig();
    pool = postgres(databaseUrl, {
      // Supabase's transaction pooler cannot keep named prepared statements.
      prepare: false,
      max: dbPoolMax,
      idle_timeout: 30,
      // Fail fast when the database is unreachable rather than letting requests hang.
      connect_timeout: 3,
      connection: { application_name: "notes-service", statement_timeout: statementTimeoutMs },
      onnotice: () => {},
    });
  }
  return pool;
}

/** Closes the pool; the next `db()` opens a new one. */
export async function closeDb(): Promise<void> {
  const current = pool;
  pool = undefined;
  globalThis.removeEventListener("error", containWriteAfterClose);
  await current?.end({ timeout: 5 });
}

/** Claims as PostgREST hands them to Postgres in `request.jwt.claims`. */
export interface CallerClaims {
  sub: string;
  role: "authenticated";
  [claim: string]: unknown;
}

/** SQLSTATE of `app.require_active_caller()`: the token is revoked or its user inactive or gone. */
const revokedCaller = "PT401";

/**
 * Runs `work` in a transaction as role `authenticated` with the caller's JWT
 * claims set locally, in one statement as PostgREST does, so `auth.uid()` and
 * the notes policies see the caller. The same statement checks in Postgres
 * that the caller still exists, is ACTIVE and holds a token of the account's
 * current version; if not, it fails before `work` runs and this throws a 401.
 */
export async function withCallerTransaction<T>(
  claims: CallerClaims,
  work: (tx: TransactionSql) => Promise<T>,
): Promise<T> {
  try {
    return await withDatabase((sql) =>
      sql.begin(async (tx) => {
        // The CTE holds volatile calls, so Postgres runs it (and sets the claims) before the check reads them.
        // Executed now but not awaited: postgres.js sends the statements of one tick together, so this and
        // the first statement of `work` travel in one round trip, and Postgres runs them in that order. If
        // the check fails, `work`'s statement fails too (25P02) and sql.begin rethrows the check's error.
        const session = tx`
          with session as (
            select set_config('role', 'authenticated', true),
                   set_config('request.jwt.claims', ${JSON.stringify(claims)}, true)
          )
          select app.require_active_caller() from session`.execute();
        const [, result] = await Promise.all([session, work(tx)]);
        return result;
      }) as Promise<T>
    );
  } catch (error) {
    if (pgErrorCode(error) === revokedCaller) throw new UnauthorizedError("Invalid or expired access token");
    throw error;
  }
}

/** Runs `work` as the connection's own role, for the account tables. */
export function withServiceTransaction<T>(work: (tx: TransactionSql) => Promise<T>): Promise<T> {
  return withDatabase((sql) => sql.begin(work) as Promise<T>);
}

const unreachableCodes = new Set([
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "57014", // query_canceled: the statement timeout fired
  "57P01", // admin_shutdown
  "53300", // too_many_connections
]);

/** True for errors that mean the database is unreachable or overloaded, not that the query is wrong. */
export function isUnavailable(error: unknown): boolean {
  const code = pgErrorCode(error);
  return code !== undefined && unreachableCodes.has(code);
}

/** Runs `work` with the pool, turning an unreachable database into a 503. */
export async function withDatabase<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
  try {
    return await work(db());
  } catch (error) {
    if (isUnavailable(error)) throw new ServiceUnavailableError();
    throw error;
  }
}

/** The Postgres error code of a driver error, if it has one. */
export function pgErrorCode(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : undefined;
}
