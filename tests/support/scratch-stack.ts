/**
 * A stack of a suite's own, with its own settings, on a fresh database that
 * the suite can also read and change with SQL: to shift a limit's window into
 * the past instead of waiting for it, to suspend or delete an account as an
 * operator would, or to compare the tables before and after a request. The
 * database is a scratch PostgreSQL database on a PostgreSQL run (a copy
 * of the run's migrated template when its setup made one, as
 * tests/global-setup.ts does; else empty, and migrated by the stack) and an
 * embedded PGlite otherwise (dev/harness/embedded-database.ts), so these
 * suites need no PostgreSQL. It is dropped when the stack stops.
 */
import postgres from "postgres";
import { inject } from "vitest";
import { type ApiRequest, type ApiResponse, call } from "./api.ts";
import { createSuiteDatabase, type RunningStack, startStack } from "../../dev/harness/stack.ts";
import { startTcpProxy, type TcpProxy } from "../../dev/harness/tcp-proxy.ts";
import { type RunningPooler, startPgBouncer } from "../../dev/harness/pgbouncer.ts";

export interface ScratchStack {
  baseUrl: string;
  logFile: string;
  /** The stack's process id, to read its memory use. */
  pid: number;
  /** A direct connection to the stack's database, as its owner. */
  sql: postgres.Sql;
  /** The database's own URL (not the proxy's), for a command an operator would run against it. */
  databaseUrl: string;
  /** With `proxied`, the TCP proxy between the stack and its database, for the test to break. */
  proxy?: TcpProxy;
  /** Whether the database is an embedded PGlite (no statement timeout of its own, one session). */
  embedded: boolean;
  /** `call` against this stack. */
  call(path: string, request?: ApiRequest): Promise<ApiResponse>;
  stop(): Promise<void>;
}

/**
 * Starts a stack with `env` on a new database named after `prefix`. With
 * `proxied`, the stack reaches the database through a TCP proxy the test controls;
 * with `behindPooler` too, on a TEST_POOLER=pgbouncer run, through PgBouncer in
 * front of that proxy, so the database behind a live pooler is what the test
 * breaks. With `openFilesLimit`, it runs under that descriptor limit. Live
 * update streams are woken by notices, as on `npm start`: the stack listens on
 * its own database (through the proxy when proxied), and behind PgBouncer on a
 * direct connection to it (`DATABASE_LISTEN_URL`), as in production behind a
 * transaction-mode pooler. With `poll`, nothing listens and streams poll.
 */
export async function startScratchStack(
  prefix: string,
  options: {
    env?: Record<string, string>;
    proxied?: boolean;
    behindPooler?: boolean;
    openFilesLimit?: number;
    poll?: boolean;
  } = {},
): Promise<ScratchStack> {
  const database = await createSuiteDatabase(prefix, {
    cluster: inject("migratedCluster"),
    template: inject("migratedTemplate"),
  });
  let proxy: TcpProxy | undefined;
  let pooler: RunningPooler | undefined;
  let stack: RunningStack;
  try {
    const url = new URL(database.url);
    proxy = options.proxied ? await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) }) : undefined;
    const proxiedUrl = proxy?.route(database.url) ?? database.url;
    const pooled = Boolean(options.behindPooler) && process.env.TEST_POOLER === "pgbouncer" && !database.embedded;
    pooler = pooled ? await startPgBouncer(proxiedUrl) : undefined;
    const listenUrl: Record<string, string> = options.poll
      ? { DATABASE_LISTEN_URL: "" }
      : pooled
      ? { DATABASE_LISTEN_URL: database.url }
      : {};
    stack = await startStack({
      env: { ...listenUrl, ...options.env },
      databaseUrl: pooler?.url ?? proxiedUrl,
      openFilesLimit: options.openFilesLimit,
    });
  } catch (error) {
    await pooler?.stop();
    await proxy?.close();
    await database.drop();
    throw error;
  }
  // Named statements on PGlite: its single session's unnamed statement belongs to the stack.
  const sql = postgres(database.url, { max: 2, prepare: database.embedded, onnotice: () => {} });
  return {
    baseUrl: stack.baseUrl,
    logFile: stack.logFile,
    pid: stack.pid,
    sql,
    databaseUrl: database.url,
    proxy,
    embedded: database.embedded,
    call: (path, request = {}) => call(path, { ...request, baseUrl: stack.baseUrl }),
    async stop() {
      await sql.end({ timeout: 5 });
      await stack.stop();
      await pooler?.stop();
      await proxy?.close();
      await database.drop();
    },
  };
}
