/**
 * A direct SQL connection to a database that has the service's schema, for
 * tests that speak to Postgres as a client of the API roles would. On
 * PostgreSQL it is the run's own database (the stack migrated it); on PGlite,
 * whose embedded server takes a single connection that the stack holds, it is
 * an in-process PGlite given the local bootstrap and every migration in order.
 */
import { readdirSync, readFileSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { pgliteExtensions } from "../../dev/pglite-extensions.ts";
import postgres from "postgres";
import { inject } from "vitest";

/** Runs one statement with `$1`-style parameters and returns its rows. */
export type Query = <Row extends Record<string, unknown> = Record<string, unknown>>(
  text: string,
  params?: (string | null)[],
) => Promise<Row[]>;

export interface TestDatabase {
  /** Runs `work` inside a transaction that is always rolled back, so tests leave nothing behind. */
  rolledBack<T>(work: (query: Query) => Promise<T>): Promise<T>;
  /** Runs one statement outside any test transaction (as the connecting superuser). */
  query: Query;
  /** Calls `onPayload` with each notice on `channel` from now on, until the returned function is called. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

const bootstrapFile = new URL("../../dev/bootstrap.sql", import.meta.url);
const migrationsDir = new URL("../../supabase/migrations/", import.meta.url);

/** The SQL the local stack applies to a fresh database: its bootstrap, then the migrations by timestamp. */
function schemaScripts(): string[] {
  const migrations = readdirSync(migrationsDir)
    .filter((name) => /^\d+_.+\.sql$/.test(name))
    .sort()
    .map((name) => readFileSync(new URL(name, migrationsDir), "utf8"));
  return [readFileSync(bootstrapFile, "utf8"), ...migrations];
}

/**
 * A PGlite with the migrations' extensions and the schema, in memory or in
 * `dataDir`: the run's migrated cluster when it has one (an embedded run), else
 * a new cluster given the local bootstrap and every migration in order.
 */
export async function createMigratedPglite(dataDir?: string): Promise<PGlite> {
  const cluster = inject("migratedCluster");
  if (cluster) {
    return await PGlite.create({
      dataDir,
      extensions: pgliteExtensions,
      loadDataDir: new Blob([readFileSync(cluster)]),
    });
  }
  const db = await PGlite.create({ dataDir, extensions: pgliteExtensions });
  for (const script of schemaScripts()) await db.exec(script);
  return db;
}

function pgliteDatabase(db: PGlite): TestDatabase {
  const query: Query = async (text, params) => (await db.query<never>(text, params)).rows;
  return {
    query,
    async rolledBack(work) {
      await db.exec("begin");
      try {
        return await work(query);
      } finally {
        await db.exec("rollback");
      }
    },
    listen: (channel, onPayload) => db.listen(channel, onPayload),
    close: () => db.close(),
  };
}

function postgresDatabase(url: string): TestDatabase {
  const sql = postgres(url, { max: 1, prepare: false, onnotice: () => {} });
  const query: Query = (text, params) => sql.unsafe(text, params ?? []);
  return {
    query,
    async rolledBack(work) {
      const connection = await sql.reserve();
      const onConnection: Query = (text, params) => connection.unsafe(text, params ?? []);
      await connection.unsafe("begin");
      try {
        return await work(onConnection);
      } finally {
        await connection.unsafe("rollback");
        connection.release();
      }
    },
    async listen(channel, onPayload) {
      const { unlisten } = await sql.listen(channel, onPayload);
      return unlisten;
    },
    close: () => sql.end({ timeout: 5 }),
  };
}

/** A connection to the run's PostgreSQL database, or to a fresh migrated PGlite when the run uses PGlite. */
export async function openTestDatabase(): Promise<TestDatabase> {
  const url = inject("databaseUrl");
  return url ? postgresDatabase(url) : pgliteDatabase(await createMigratedPglite());
}
