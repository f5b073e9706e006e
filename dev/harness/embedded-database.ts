/**
 * A database of a suite's own without PostgreSQL: a fresh in-memory PGlite
 * with the migrations' extensions, served over the wire protocol by pglite-socket, as the local
 * stack serves its own. The stack connects to it like to any PostgreSQL (and
 * listens on it for change notices, as on its own), and so does the suite, to
 * change or read rows as an operator would.
 *
 * PGlite is one session. pglite-socket serves several connections by running
 * one connection's transaction at a time, so a transaction held open by the
 * suite makes the stack wait, as a row lock would. Connections made here use
 * named statements (postgres.js's `prepare: true`): the session's one unnamed
 * statement is the stack's.
 */
import { readFile, writeFile } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import { pgliteExtensions } from "../pglite-extensions.ts";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { passNoticesToListeners } from "../pglite-notices.ts";

export interface SuiteDatabase {
  url: string;
  /** Whether it is an embedded PGlite (else a PostgreSQL database). */
  embedded: boolean;
  drop(): Promise<void>;
}

/**
 * Writes a cluster to `file` for `startEmbeddedDatabase` to start from:
 * creating a cluster (PGlite's initdb) and applying the schema take seconds,
 * loading a written cluster under one, and a run starts dozens of suite
 * databases. `prepare` gets the cluster served on a loopback port first, to
 * apply the schema to it once (by starting a stack on it, which migrates).
 */
export async function writeCluster(file: string, prepare: (url: string) => Promise<void>): Promise<void> {
  const db = await PGlite.create({ extensions: pgliteExtensions });
  const database = await serve(db);
  try {
    await prepare(database.url);
    await trimForSuites(db);
    const cluster = await db.dumpDataDir("none");
    await writeFile(file, new Uint8Array(await cluster.arrayBuffer()));
  } finally {
    await database.drop();
  }
}

/**
 * Leaves a cluster only what a suite database uses. Starting one unpacks every file of the cluster and zeroes its
 * shared buffers, and a run starts one for every suite with a stack of its own. The two template databases are 14 of
 * the cluster's 43 MB and serve only CREATE DATABASE, which no suite runs on an embedded database; 128 MB of buffers
 * hold data of a few megabytes. A suite database then starts in about half the CPU time (medians of six first
 * starts: 1.6 s against 3.0 s). Takes effect at the next start, from the written cluster.
 */
async function trimForSuites(db: PGlite): Promise<void> {
  await db.exec(`alter system set shared_buffers = '16MB'`);
  await db.exec(`update pg_database set datistemplate = false where datname in ('template0', 'template1')`);
  await db.exec(`drop database template0`);
  await db.exec(`drop database template1`);
}

/**
 * Starts an embedded database on a free loopback port: an empty one, to which
 * the stack applies the schema, or with `clusterFile` (written by
 * `writeCluster`) the cluster in that file.
 */
export async function startEmbeddedDatabase(clusterFile?: string): Promise<SuiteDatabase> {
  const loadDataDir = clusterFile ? new Blob([await readFile(clusterFile)]) : undefined;
  return await serve(await PGlite.create({ extensions: pgliteExtensions, loadDataDir }));
}

async function serve(db: PGlite): Promise<SuiteDatabase> {
  // The stack's pool and its notice connection, the suite's connections, and one that holds locks.
  passNoticesToListeners(db);
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 10 });
  await server.start();
  return {
    url: `postgresql://postgres@${server.getServerConn()}/postgres`,
    embedded: true,
    async drop() {
      await server.stop();
      await db.close();
    },
  };
}
