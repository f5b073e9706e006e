/**
 * A database of a suite's own without PostgreSQL: a fresh in-memory PGlite
 * with the migrations' extensions, served over the wire protocol by pglite-socket, as the local
 * stack serves its own. The stack connects to it like to any PostgreSQL, and
 * so does the suite, to change or read rows as an operator would.
 *
 * PGlite is one session. pglite-socket serves several connections by running
 * one connection's transaction at a time, so a transaction held open by the
 * suite makes the stack wait, as a row lock would. Connections made here use
 * named statements (postgres.js's `prepare: true`): the session's one unnamed
 * statement is the stack's.
 */
import { PGlite } from "@electric-sql/pglite";
import { pgliteExtensions } from "../pglite-extensions.ts";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";

export interface SuiteDatabase {
  url: string;
  /** Whether it is an embedded PGlite (else a PostgreSQL database). */
  embedded: boolean;
  drop(): Promise<void>;
}

/** Starts an empty embedded database on a free loopback port; the stack applies the schema. */
export async function startEmbeddedDatabase(): Promise<SuiteDatabase> {
  const db = await PGlite.create({ extensions: pgliteExtensions });
  // The stack's pool, the suite's connection, and one that holds locks.
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 8 });
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
