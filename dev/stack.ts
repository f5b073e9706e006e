/**
 * `npm start`: the whole service on one machine. Starts the database (a
 * PostgreSQL from DATABASE_URL, or the embedded PGlite), applies the
 * migrations, serves every function on Supabase's URL layout and drains the
 * mail outbox (printing each mail, and sending it when a provider is configured).
 * It takes its port and the embedded database's folder (dev/data-dir-lock.ts)
 * before it opens the database, so a second one is refused in one line.
 */
import { batchConsoleOutput } from "./batched-console.ts";
import { ConfigError, loadConfig } from "../supabase/functions/_shared/config/mod.ts";
import { closeDb } from "../supabase/functions/_shared/db/transactions.ts";
import { stopChangeNotices } from "../supabase/functions/_shared/db/change-notices.ts";
import { endChangeStreams } from "../supabase/functions/_shared/notes/open-streams.ts";
import { startEmbeddedPostgres } from "./embedded-postgres.ts";
import { serveBounded } from "./bounded-server.ts";
import type { Handler } from "../supabase/functions/_shared/http/endpoint.ts";
import { createGateway, functionHandlers } from "./gateway.ts";
import { createLocalStorage, localStorageDir } from "./local-storage.ts";
import { setUpAttachmentsBucket } from "./attachments-bucket.ts";
import { DataDirInUse, lockDataDir } from "./data-dir-lock.ts";
import { startLocalMail } from "./local-mail.ts";
import { startLocalRemovals } from "./local-removals.ts";
import { startLocalIdentityProvider } from "./local-identity-provider.ts";
import { migrate, MigrationError } from "./migrate.ts";
import { writeDatabaseSettings } from "./database-settings.ts";
import { readStackSettings, serverBounds } from "./settings.ts";

const stopSignals: Deno.Signal[] = ["SIGINT", "SIGTERM"];

/** Prints why in one line, with no stack trace, and exits; `Deno.exit` releases the data folder's lock. */
function fail(message: string): never {
  console.error(`The stack did not start: ${message}`);
  Deno.exit(1);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Why the server could not listen, and for a taken port what to do about it. */
function listenProblem(port: number, error: unknown): string {
  if ((error as { code?: string }).code !== "EADDRINUSE") return `cannot listen on port ${port}: ${errorText(error)}`;
  return `port ${port} is in use (another npm start?); set PORT to a free port, e.g. PORT=${port + 1} npm start`;
}

async function main() {
  batchConsoleOutput();
  const settings = (() => {
    try {
      return readStackSettings();
    } catch (error) {
      return fail(errorText(error));
    }
  })();

  // The functions read their configuration from the environment, as on Supabase.
  Deno.env.set("JWT_SECRET", settings.jwtSecret);
  Deno.env.set("MFA_SECRET_KEY", settings.mfaSecretKey);
  Deno.env.set("SUPABASE_ANON_KEY", settings.anonKey);
  Deno.env.set("DATABASE_URL", settings.databaseUrl ?? "postgresql://embedded");
  // Provider sign-in sends browsers back to this stack's own callback; with PORT=0 the port is known once listening.
  const functionsUrlGiven = Boolean(Deno.env.get("FUNCTIONS_URL"));
  if (!functionsUrlGiven) Deno.env.set("FUNCTIONS_URL", `http://127.0.0.1:${settings.port}/functions/v1`);
  let bodyTimeoutMs: number;
  try {
    bodyTimeoutMs = loadConfig(Deno.env).limits.bodyTimeoutMs;
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message);
    throw error;
  }

  // The port is taken first, so a second `npm start` is refused before it opens a database.
  // A request that comes while the database starts waits for the gateway.
  const gateway = Promise.withResolvers<Handler>();
  const server = await serveBounded((request, info) => gateway.promise.then((handle) => handle(request, info)), {
    hostname: "127.0.0.1",
    port: settings.port,
    ...serverBounds(settings, bodyTimeoutMs),
  }).catch((error) => fail(listenProblem(settings.port, error)));

  // Until the stack is ready, SIGINT or SIGTERM ends it at once, as by default, but through
  // `Deno.exit`, which releases the data folder's lock.
  const exitNow = () => Deno.exit(1);
  for (const signal of stopSignals) Deno.addSignalListener(signal, exitNow);

  if (!settings.databaseUrl) {
    // Held until the process exits: `Deno.exit` releases it.
    await lockDataDir(settings.pgliteDataDir).catch((error) =>
      fail(
        error instanceof DataDirInUse
          ? `${error.message}: stop it, or set PGLITE_DATA_DIR to another folder`
          : errorText(error),
      )
    );
  }
  const embedded = settings.databaseUrl ? undefined : await startEmbeddedPostgres(settings.pgliteDataDir);
  if (embedded) {
    Deno.env.set("DATABASE_URL", embedded.url);
    // PGlite is a single session: one connection, shared by the whole stack.
    Deno.env.set("DB_POOL_MAX", "1");
  }
  const databaseUrl = embedded?.url ?? settings.databaseUrl ?? "";
  // Live update streams wake at once when the stack listens for change notices on its own database, embedded or
  // given. DATABASE_LISTEN_URL set empty makes them poll: a transaction-mode pooler in DATABASE_URL delivers none.
  if (Deno.env.get("DATABASE_LISTEN_URL") === undefined) Deno.env.set("DATABASE_LISTEN_URL", databaseUrl);

  try {
    await migrate(databaseUrl);
    // The database enforces what this start was given, whatever an earlier start wrote.
    await writeDatabaseSettings(databaseUrl, settings.database);
  } catch (error) {
    await embedded?.stop();
    if (error instanceof MigrationError) fail(error.message);
    fail(`cannot reach the database: ${errorText(error)}`);
  }

  if (!functionsUrlGiven) Deno.env.set("FUNCTIONS_URL", `http://127.0.0.1:${server.port}/functions/v1`);
  // Attachments go to this stack's own Storage endpoints, as the functions reach Storage on hosted Supabase.
  if (!Deno.env.get("SUPABASE_URL")) Deno.env.set("SUPABASE_URL", `http://127.0.0.1:${server.port}`);
  Deno.env.set("SUPABASE_SERVICE_ROLE_KEY", settings.serviceRoleKey);
  const localProvider = await startLocalIdentityProvider(Deno.env.get("FUNCTIONS_URL") ?? "").catch((error) =>
    fail(`cannot start the local identity provider: ${errorText(error)}`)
  );
  try {
    // The provider's settings joined the rest: checked before the first request, as the others were.
    loadConfig(Deno.env);
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message);
    throw error;
  }
  const storageDir = localStorageDir(settings.pgliteDataDir);
  gateway.resolve(createGateway(
    await functionHandlers(),
    createLocalStorage({ dataDir: storageDir, serviceKey: settings.serviceRoleKey, jwtSecret: settings.jwtSecret }),
  ));
  await setUpAttachmentsBucket().catch((error) => fail(`cannot set up the attachments bucket: ${errorText(error)}`));
  const stopLocalMail = startLocalMail();
  const stopLocalRemovals = startLocalRemovals();

  const base = `http://127.0.0.1:${server.port}/functions/v1`;
  const database = embedded ? `embedded PGlite in ${settings.pgliteDataDir}` : "PostgreSQL from DATABASE_URL";
  console.log(`\nNotes service is running on ${database}`);
  console.log(`  Base URL:  ${base}`);
  console.log(`  apikey:    ${settings.anonKey}`);
  console.log(`  API docs:  http://127.0.0.1:${server.port}/docs`);
  if (localProvider) {
    console.log(`  Sign-in:   provider "local" at ${localProvider.issuer}: any name signs in, as <name>@example.com`);
  }
  for (const name of settings.defaulted) {
    console.warn(`  WARNING: ${name} is not set; using the public development default. Never deploy with it.`);
  }
  console.log(`Ready on ${base}\n`);

  const shutdown = async () => {
    // Open live update streams end with their reconnect hint rather than mid-event, and have a second to send it
    // before the server closes what is left; the notice connection closes.
    endChangeStreams();
    stopChangeNotices();
    await server.close(1_000);
    await stopLocalMail();
    await stopLocalRemovals();
    await localProvider?.stop();
    await closeDb();
    await embedded?.stop();
    // One line, so whoever pressed Ctrl-C need not look in the data folder to trust the stop.
    console.log(
      embedded
        ? `Notes service stopped; its data is saved in ${settings.pgliteDataDir} for the next npm start.`
        : "Notes service stopped; its data stays in the PostgreSQL database of DATABASE_URL.",
    );
    Deno.exit(0);
  };
  for (const signal of stopSignals) {
    Deno.removeSignalListener(signal, exitNow);
    Deno.addSignalListener(signal, shutdown);
  }
}

await main();
