/**
 * A running stack whose database a test can also change with SQL, as an
 * operator would (suspend an account, let a code expire).
 *
 * On PostgreSQL this is the run's shared stack and a second connection to its
 * database. The embedded PGlite is one session that the stack holds, so there
 * the suite gets a stack of its own: `withSql` stops it, opens its data
 * directory directly, runs the SQL and starts the stack again on the same data.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { pgcrypto } from "@electric-sql/pglite/contrib/pgcrypto";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import postgres from "postgres";
import { inject } from "vitest";
import { type RunningStack, sharedStackLimits, startStack } from "./stack.ts";

export type Sql = postgres.Sql;

export interface StackWithSql {
  /** The stack's base URL; on PGlite it changes with each `withSql`. */
  readonly baseUrl: string;
  /** The stack's log; on PGlite a new one starts with each `withSql`. */
  readonly logFile: string;
  /** Runs `work` on a direct connection to the stack's database. */
  withSql<T>(work: (sql: Sql) => Promise<T>): Promise<T>;
  stop(): Promise<void>;
}

async function withConnection<T>(url: string, work: (sql: Sql) => Promise<T>): Promise<T> {
  const sql = postgres(url, { max: 1, prepare: false, onnotice: () => {} });
  try {
    return await work(sql);
  } finally {
    await sql.end();
  }
}

/** The shared stack on PostgreSQL, or a stack of the suite's own on PGlite. */
export async function stackWithSql(): Promise<StackWithSql> {
  const databaseUrl = inject("databaseUrl");
  if (databaseUrl) {
    return {
      baseUrl: inject("baseUrl"),
      logFile: inject("logFile"),
      withSql: (work) => withConnection(databaseUrl, work),
      stop: () => Promise.resolve(),
    };
  }
  const dataDir = mkdtempSync(join(tmpdir(), "notes-pglite-"));
  // The shared stack's limits too, so this one differs from it only in owning its database.
  const env = { ...sharedStackLimits, PGLITE_DATA_DIR: dataDir };
  let stack: RunningStack = await startStack({ env });
  return {
    get baseUrl() {
      return stack.baseUrl;
    },
    get logFile() {
      return stack.logFile;
    },
    async withSql(work) {
      await stack.stop();
      const db = await PGlite.create({ dataDir, extensions: { pgcrypto } });
      const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 1 });
      await server.start();
      try {
        return await withConnection(`postgresql://postgres@${server.getServerConn()}/postgres`, work);
      } finally {
        await server.stop();
        await db.close();
        stack = await startStack({ env });
      }
    },
    async stop() {
      await stack.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
