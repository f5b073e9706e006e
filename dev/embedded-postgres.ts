/**
 * The embedded database of the local stack: PGlite on disk, served over the
 * Postgres wire protocol so the functions use the same driver as in
 * production. PGlite is one session: the server takes two connections, the
 * functions' pool of one and their notice connection, to which every notice is
 * passed on (`pglite-notices.ts`), so live update streams wake at once.
 */
import { PGlite } from "@electric-sql/pglite";
import { pgliteExtensions } from "./pglite-extensions.ts";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { passNoticesToListeners } from "./pglite-notices.ts";

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

/** Opens (or creates) the database in `dataDir` and serves it on a free loopback port. */
export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  await Deno.mkdir(dataDir, { recursive: true });
  const db = await PGlite.create({ dataDir, extensions: pgliteExtensions });
  passNoticesToListeners(db);
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 2 });
  await server.start();
  return {
    url: `postgresql://postgres@${server.getServerConn()}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
