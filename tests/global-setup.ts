/**
 * One stack for the whole run: on a fresh embedded PGlite by default (started
 * from the migrated cluster every suite database of the run starts from), or on a
 * fresh PostgreSQL database with TEST_DATABASE=postgres (or on a database
 * given in TEST_DATABASE_URL, e.g. one prepared by `npm run db:push`), which the
 * stack migrates; a PostgreSQL run's suite databases are copies of a template
 * database migrated once for the run. With
 * TEST_POOLER=pgbouncer the stack reaches that database through PgBouncer in
 * transaction mode; the tests' own SQL still connects directly.
 */
import type { TestProject } from "vitest/node";
import { startEmbeddedDatabase, type SuiteDatabase } from "../dev/harness/embedded-database.ts";
import { migratedClusterFile } from "../dev/harness/migrated-cluster.ts";
import { type RunningPooler, startPgBouncer } from "../dev/harness/pgbouncer.ts";
import {
  adminServerAnswers,
  createMigratedTemplate,
  createScratchDatabase,
  type RunningStack,
  runUsesPostgres,
  sharedStackLimits,
  startStack,
} from "../dev/harness/stack.ts";
import { devAnonKey } from "../dev/settings.ts";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    logFile: string;
    databaseUrl: string | undefined;
    /** On an embedded run, the migrated PGlite cluster every suite database starts from. */
    migratedCluster: string | undefined;
    /** On a PostgreSQL run, the migrated database every suite database is copied from. */
    migratedTemplate: string | undefined;
  }
}

export default async function setup(project: TestProject) {
  const scratch = process.env.TEST_DATABASE === "postgres" && !process.env.TEST_DATABASE_URL
    ? await createScratchDatabase("notes_test")
    : undefined;
  const databaseUrl = process.env.TEST_DATABASE_URL ?? scratch?.url;
  if (process.env.TEST_POOLER === "pgbouncer" && !databaseUrl) {
    throw new Error("TEST_POOLER=pgbouncer needs PostgreSQL: set TEST_DATABASE=postgres or TEST_DATABASE_URL");
  }
  let pooler: RunningPooler | undefined;
  let embedded: SuiteDatabase | undefined;
  let stack: RunningStack | undefined;
  let template: Awaited<ReturnType<typeof createMigratedTemplate>> | undefined;
  const migratedCluster = runUsesPostgres() ? undefined : await migratedClusterFile();
  // Each part goes even when one before it fails to, so no database is left on the server.
  const teardown = async () => {
    const parts = [
      () => stack?.stop(),
      () => pooler?.stop(),
      () => embedded?.drop(),
      () => scratch?.drop(),
      () => template?.drop(),
    ];
    const failures: unknown[] = [];
    for (const stop of parts) {
      try {
        await stop();
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, "the run's stack or databases did not all stop");
  };
  try {
    // A run given only TEST_DATABASE_URL may have no server to make suite databases on; the suites it runs then need
    // none (those that start stacks of their own would fail without it, template or not).
    template = runUsesPostgres() && await adminServerAnswers() ? await createMigratedTemplate() : undefined;
    pooler = process.env.TEST_POOLER === "pgbouncer" && databaseUrl ? await startPgBouncer(databaseUrl) : undefined;
    embedded = migratedCluster ? await startEmbeddedDatabase(migratedCluster) : undefined;
    stack = await startStack({
      databaseUrl: pooler?.url ?? databaseUrl ?? embedded?.url,
      env: {
        ...sharedStackLimits,
        // The cheapest bcrypt: no suite on this stack is about hashing, and hundreds of sign-ups and logins pay it.
        // The production cost is what the load suites (npm run test:load) and the bench measure.
        BCRYPT_COST: "4",
        // The README's walk-through runs as written against this stack, with the development apikey it names.
        SUPABASE_PUBLISHABLE_KEYS: JSON.stringify({ readme: devAnonKey }),
        // Live update streams listen for notices on the database, as on `npm start` (on PGlite too, which passes
        // every notice to the connections that listen); on PostgreSQL on a direct connection, as in production
        // behind a transaction-mode pooler.
        ...(databaseUrl ? { DATABASE_LISTEN_URL: databaseUrl } : {}),
      },
    });
  } catch (error) {
    // Vitest runs no teardown for a setup that threw: what did start (PgBouncer's temp folder, the database) goes now.
    await teardown();
    throw error;
  }
  project.provide("baseUrl", stack.baseUrl);
  project.provide("logFile", stack.logFile);
  project.provide("databaseUrl", databaseUrl);
  project.provide("migratedCluster", migratedCluster);
  project.provide("migratedTemplate", template?.name);
  return teardown;
}
