/**
 * Starts the real local stack (Deno, the functions, a real database) for a
 * test run, the bench or the soak, the way `npm start` does, and captures its
 * log the way a developer reads it. With TEST_DATABASE=postgres it runs on a fresh PostgreSQL database
 * created for the run; otherwise on a fresh embedded PGlite.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { startEmbeddedDatabase, type SuiteDatabase } from "./embedded-database.ts";
import { stackDenoArgs } from "../stack-command.ts";

export const testAnonKey = "test-anon-key";
export const testJwtSecret = "test-jwt-secret-of-at-least-thirty-two-bytes!";
/** The key second-factor secrets are sealed under on every stack the tests and benchmarks start. */
export const testMfaSecretKey = "test-second-factor-key-of-at-least-32-bytes!";
/** The functions' two secrets on those stacks. */
export const testSecrets = { JWT_SECRET: testJwtSecret, MFA_SECRET_KEY: testMfaSecretKey } as const;

/**
 * Limits of the run's shared stack (and the bench's). Every suite calls from
 * 127.0.0.1, so the production per-address limits (30 logins, sign-ups, code
 * attempts or reset requests in 5 minutes), reset-mail spacing (one a minute per account),
 * wrong-code allowance (20 a day per account), refreshes (300 in 5 minutes) and verifications (30 in 5
 * minutes) would throttle suites that are
 * not about limits. The limits themselves are tested on stacks of their own
 * (tests/limits.test.ts).
 */
export const sharedStackLimits: Record<string, string> = {
  LOGIN_MAX_ATTEMPTS_PER_ADDRESS: "1000000",
  SIGNUP_MAX_PER_ADDRESS: "1000000",
  RESET_CODE_MAX_ATTEMPTS_PER_ADDRESS: "1000000",
  RESET_REQUEST_MAX_PER_ADDRESS: "1000000",
  RESET_CODE_MAX_WRONG_PER_ACCOUNT: "1000000",
  RESET_MAIL_MIN_INTERVAL_SECONDS: "0",
  RESET_MAILS_PER_HOUR: "1000000",
  REFRESH_MAX_PER_ADDRESS: "1000000",
  VERIFY_MAX_PER_ADDRESS: "1000000",
  ANONYMOUS_MAX_PER_ADDRESS: "1000000",
};

export interface RunningStack {
  baseUrl: string;
  logFile: string;
  /** Set when the stack runs on PostgreSQL: the database it uses. */
  databaseUrl?: string;
  /** The stack's process id, to read its memory use. */
  pid: number;
  stop(): Promise<void>;
}

const adminUrl = process.env.TEST_PG_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

/**
 * Creates a PostgreSQL database for one run, empty or, with `template`, a copy of that database, and returns its URL
 * and a dropper.
 */
export async function createScratchDatabase(prefix: string, template?: string) {
  const name = `${prefix}_${Date.now()}_${process.pid}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"${template ? ` template "${template}"` : ""}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      const dropper = postgres(adminUrl, { max: 1, onnotice: () => {} });
      await dropper.unsafe(`drop database if exists "${name}" with (force)`);
      await dropper.end();
    },
  };
}

/** Whether the server that scratch databases are made on (TEST_PG_ADMIN_URL, or 127.0.0.1:5432) answers. */
export async function adminServerAnswers(): Promise<boolean> {
  const admin = postgres(adminUrl, { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    await admin`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await admin.end();
  }
}

/**
 * A PostgreSQL database with the schema applied, migrated by a stack as any stack migrates its database, for a run's
 * suite databases to be copied from: a stack migrating an empty database of its own spends about 0.4 s on an idle
 * machine and seconds on a busy one, and a run starts dozens; a copy takes under 0.1 s. Nothing may connect to it
 * while it is copied, so only `createSuiteDatabase` names it.
 */
export async function createMigratedTemplate(): Promise<{ name: string; drop(): Promise<void> }> {
  const template = await createScratchDatabase("notes_template");
  try {
    await (await startStack({ databaseUrl: template.url })).stop();
  } catch (error) {
    await template.drop();
    throw error;
  }
  return template;
}

/**
 * Whether this run uses PostgreSQL: `npm run test:pg` (TEST_DATABASE=postgres), a
 * given database (TEST_DATABASE_URL), or a given server (TEST_PG_ADMIN_URL).
 * Otherwise everything runs on embedded PGlite and no PostgreSQL is needed.
 */
export function runUsesPostgres(): boolean {
  return process.env.TEST_DATABASE === "postgres" || Boolean(process.env.TEST_DATABASE_URL) ||
    Boolean(process.env.TEST_PG_ADMIN_URL);
}

/**
 * A database for a suite that starts a stack of its own: on a PostgreSQL run a scratch database, copied from
 * `from.template` (written by `createMigratedTemplate`) when given; else an embedded PGlite, started from
 * `from.cluster` (a file `writeCluster` wrote) when given.
 */
export async function createSuiteDatabase(
  prefix: string,
  from: { cluster?: string; template?: string } = {},
): Promise<SuiteDatabase> {
  if (!runUsesPostgres()) return await startEmbeddedDatabase(from.cluster);
  return { ...(await createScratchDatabase(prefix, from.template)), embedded: false };
}

/** Sends SIGTERM to `child`, unless it has exited already, and waits until it has. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  // A child ended by a signal has no exit code, only a signal code.
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

/** Starts `deno run dev/stack.ts` on a free port (with `openFilesLimit`, under that `ulimit -n`) and waits until it is ready. */
export async function startStack(
  options: {
    env?: Record<string, string>;
    databaseUrl?: string;
    openFilesLimit?: number;
    /** More `deno run` flags, such as `--inspect` for a profile. */
    denoFlags?: string[];
  } = {},
): Promise<RunningStack> {
  const workDir = mkdtempSync(join(tmpdir(), "notes-stack-"));
  const logFile = join(workDir, "stack.log");
  // The stack writes its log straight to the file, so a test or benchmark process never spends
  // its own time relaying the stack's output.
  const logFd = openSync(logFile, "a");
  const [run, ...rest] = stackDenoArgs;
  const command = ["deno", run, ...(options.denoFlags ?? []), ...rest];
  // A descriptor limit of its own, as `ulimit -n` in the shell that starts it; `exec` keeps the pid Deno's.
  const child: ChildProcess = spawn(
    options.openFilesLimit ? "sh" : command[0],
    options.openFilesLimit
      ? ["-c", `ulimit -n ${options.openFilesLimit} && exec ${command.join(" ")}`]
      : command.slice(1),
    {
      env: {
        ...process.env,
        PORT: "0",
        PGLITE_DATA_DIR: join(workDir, "pglite"),
        ...testSecrets,
        SUPABASE_ANON_KEY: testAnonKey,
        ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
        ...options.env,
      },
      stdio: ["ignore", logFd, logFd],
    },
  );
  closeSync(logFd);
  let baseUrl: string;
  try {
    baseUrl = await waitUntilReady(child, logFile);
  } catch (error) {
    // A stack that exited, or is still starting when time is up: nothing of it is left behind.
    await stopProcess(child);
    rmSync(workDir, { recursive: true, force: true });
    throw error;
  }
  return {
    baseUrl,
    logFile,
    databaseUrl: options.databaseUrl,
    pid: child.pid ?? 0,
    async stop() {
      await stopProcess(child);
      rmSync(workDir, { recursive: true, force: true });
    },
  };
}

/** A stack that exited before it was ready: its exit code and all it printed, for a test of a refusal. */
export class StackExited extends Error {
  constructor(readonly code: number | null, readonly log: string) {
    super(`stack exited with ${code}:\n${log}`);
  }
}

/** Resolves with the base URL once the stack's log says it is ready; rejects if it exits or takes too long. */
function waitUntilReady(child: ChildProcess, logFile: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 90_000;
    const onExit = (code: number | null) => {
      clearInterval(poll);
      reject(new StackExited(code, readFileSync(logFile, "utf8")));
    };
    const poll = setInterval(() => {
      const log = readFileSync(logFile, "utf8");
      const ready = /Ready on (http:\/\/\S+)/.exec(log);
      if (ready) {
        clearInterval(poll);
        child.off("exit", onExit);
        resolve(ready[1]);
      } else if (Date.now() > deadline) {
        clearInterval(poll);
        child.off("exit", onExit);
        reject(new Error(`stack did not start in time:\n${log}`));
      }
    }, 50);
    child.once("exit", onExit);
  });
}
