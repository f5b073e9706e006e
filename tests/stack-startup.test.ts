/**
 * What `npm start` says about its configuration: it stops on a setting that
 * is wrong (a JWT secret that would sign weak tokens) with the reason, and it
 * warns loudly when it runs on the public development defaults. A second
 * `npm start` is refused in one line, before it opens any database, when the
 * port or the data folder is the first one's; a lock left by a stack that is
 * gone is taken over.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { integerSettings } from "../supabase/functions/_shared/config/mod.ts";
import { call, readResetCode, stackLog, uniqueEmail, waitForLog } from "./support/api.ts";
import { expectAuthError, expectSession } from "./support/auth.ts";
import { startScratchStack } from "./support/scratch-stack.ts";
import { type RunningStack, StackExited, startStack } from "../dev/harness/stack.ts";
import { lockFileName } from "../dev/data-dir-lock.ts";

/** The documented development `apikey` (dev/settings.ts). */
const devAnonKey = "local-dev-anon-key-not-for-production";
const publishableKey = "sb_publishable_startup_test_key";

describe("starting the stack", () => {
  // Each rule of the configuration is tested once, in tests/unit/config.test.ts; this is the path from a
  // broken setting to what the developer reads.
  it("refuses a JWT_SECRET shorter than 32 bytes, saying why", async () => {
    await expect(startStack({ env: { JWT_SECRET: "short" } })).rejects.toThrow(
      /The stack did not start: JWT_SECRET is 5 bytes; HS256 needs at least 32/,
    );
  });

  it("refuses a setting the database cannot take, naming it and its range", async () => {
    await expect(startStack({ env: { SESSION_IDLE_TIMEOUT_SECONDS: "3000000000" } })).rejects.toThrow(
      /The stack did not start: SESSION_IDLE_TIMEOUT_SECONDS must be an integer from 1 to 2147483647, got "3000000000"/,
    );
  });

  it("serves sign-ups, logins, refreshes and resets with every setting that reaches SQL at its maximum", async () => {
    const maxima = Object.entries(integerSettings).filter(([, spec]) => (spec.sinks as string[]).includes("sql"));
    const stack = await startScratchStack("maxima", {
      env: { BCRYPT_COST: "4", ...Object.fromEntries(maxima.map(([name, { max }]) => [name, String(max)])) },
    });
    try {
      const on = { baseUrl: stack.baseUrl };
      const email = uniqueEmail("maxima");
      const password = "correct horse battery";
      expectSession(await call("/auth/register", { ...on, body: { name: "Max", email, password } }), 201);
      const login = expectSession(await call("/auth/login", { ...on, body: { email, password } }), 200);
      expectSession(await call("/auth/refresh", { ...on, body: { refreshToken: login.refreshToken } }), 200);
      expect((await call("/auth/resend-verification", { ...on, body: { email } })).status).toBe(200);
      expect((await call("/auth/request-password-reset", { ...on, body: { email } })).status).toBe(200);
      // The mail drain resolves the request with the reset-mail limits, and prunes with the retention settings.
      const code = await readResetCode(email, 0, stack.logFile);
      const body = { email, code, password: "a brand new secret" };
      expectSession(await call("/auth/create-password", { ...on, body }), 200);
      expect(stackLog(stack.logFile)).not.toMatch(/"level":"error"/);
    } finally {
      await stack.stop();
    }
  }, 120_000);

  it("warns loudly on default secrets, prints its apikey, and accepts it and the publishable keys", async () => {
    const stack = await startScratchStack("defaults", {
      env: {
        JWT_SECRET: "",
        MFA_SECRET_KEY: "",
        SUPABASE_ANON_KEY: "",
        SUPABASE_PUBLISHABLE_KEYS: JSON.stringify({ default: publishableKey }),
      },
    });
    try {
      const warnings =
        /WARNING: (JWT_SECRET|MFA_SECRET_KEY|SUPABASE_ANON_KEY) is not set; using the public development default/g;
      const warned = await waitForLog(
        (text) => {
          const names = [...text.matchAll(warnings)].map((match) => match[1]);
          return names.length === 3 ? names.sort() : undefined;
        },
        "warnings about the three defaults",
        stack.logFile,
      );
      expect(warned).toEqual(["JWT_SECRET", "MFA_SECRET_KEY", "SUPABASE_ANON_KEY"]);
      const log = stackLog(stack.logFile);
      expect(log).toContain("Never deploy with it.");
      expect(log).toContain(`apikey:    ${devAnonKey}`);
      expect(log).toContain(`Base URL:  ${stack.baseUrl}`);
      const docs = /API docs: {2}(\S+)/.exec(log)?.[1] ?? "";
      expect(docs).toBe(`${new URL(stack.baseUrl).origin}/docs`);
      const page = await fetch(docs);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("swagger-ui");

      const body = { email: "nobody@example.com", password: "whatever password" };
      for (const apiKey of [devAnonKey, publishableKey]) {
        // Past the apikey gate: the credentials, not the key, are refused.
        const response = await call("/auth/login", { body, apiKey, baseUrl: stack.baseUrl });
        expect(expectAuthError(response, 401).message).toBe("Invalid email or password");
      }
      const wrongKey = await call("/auth/login", { body, apiKey: "test-anon-key", baseUrl: stack.baseUrl });
      expect(expectAuthError(wrongKey, 401).message).toBe("Invalid apikey");
    } finally {
      await stack.stop();
    }
  }, 120_000);

  it("does not warn when the secrets are set", () => {
    // The run's shared stack is started with its own JWT_SECRET and SUPABASE_ANON_KEY.
    expect(stackLog()).toContain("Ready on ");
    expect(stackLog()).not.toMatch(/WARNING: (JWT_SECRET|MFA_SECRET_KEY|SUPABASE_ANON_KEY) is not set/);
  });
});

const lockFile = (dataDir: string) => join(dataDir, lockFileName);

/** Data folders of the stacks below, removed with it. */
let scratch: string;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "notes-startup-"));
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

/** How a stack that must be refused exited; one that starts anyway is stopped and fails the test. */
async function refusal(starting: Promise<RunningStack>): Promise<StackExited> {
  const outcome = await starting.catch((error: unknown) => error);
  if (outcome instanceof StackExited) return outcome;
  if (outcome instanceof Error) throw outcome;
  await (outcome as RunningStack).stop();
  throw new Error("the stack started");
}

describe("a second npm start, and a lock left by one that is gone", () => {
  let first: RunningStack | undefined;
  let firstDataDir: string;

  beforeAll(async () => {
    firstDataDir = join(scratch, "first");
    first = await startStack({ env: { PGLITE_DATA_DIR: firstDataDir } });
  });

  afterAll(async () => {
    await first?.stop();
  });

  it("refuses the first one's port in one line that says to set PORT, having opened nothing", async () => {
    const port = new URL(first!.baseUrl).port;
    const dataDir = join(scratch, "second");
    const refused = await refusal(startStack({ env: { PORT: port, PGLITE_DATA_DIR: dataDir } }));
    expect(refused.code).toBe(1);
    const lines = refused.log.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^The stack did not start: port ${port} is in use.*set PORT`));
    expect(existsSync(dataDir)).toBe(false);
  });

  it("refuses the first one's data folder in one line naming its pid, before it opens the database", async () => {
    // The database rewrites postmaster.pid whenever it is opened.
    const opened = join(firstDataDir, "postmaster.pid");
    const before = { text: readFileSync(opened, "utf8"), mtimeMs: statSync(opened).mtimeMs };
    const refused = await refusal(startStack({ env: { PGLITE_DATA_DIR: firstDataDir } }));
    expect(refused.code).toBe(1);
    const lines = refused.log.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^The stack did not start: .* is in use by another process \(pid \d+\)/);
    expect(lines[0]).toContain(`(pid ${first!.pid})`);
    expect({ text: readFileSync(opened, "utf8"), mtimeMs: statSync(opened).mtimeMs }).toEqual(before);
    expect(readFileSync(lockFile(firstDataDir), "utf8").trim()).toBe(String(first!.pid));
    // The first one goes on serving.
    const response = await call("/notes-fetch", { baseUrl: first!.baseUrl });
    expect(response.status).toBe(401);
  });

  it(
    "is taken over when its holder is gone, in one line naming the dead pid; on Ctrl-C the stack says it stopped and its lock goes",
    async () => {
      // The first stack's folder, already initialised and migrated, so this start costs what a restart does.
      await first!.stop();
      first = undefined;
      const dataDir = firstDataDir;
      // A process that has exited: its pid is no longer running.
      const dead = spawnSync(process.execPath, ["--version"]).pid;
      writeFileSync(lockFile(dataDir), `${dead}\n`);
      const stack = await startStack({ env: { PGLITE_DATA_DIR: dataDir } });
      try {
        const takeover = stackLog(stack.logFile).split("\n").filter((line) => line.includes(`pid ${dead}`));
        expect(takeover).toEqual([
          expect.stringMatching(/^Took over .*: pid \d+, which held it, is no longer running$/),
        ]);
        expect(readFileSync(lockFile(dataDir), "utf8").trim()).toBe(String(stack.pid));
        // Ctrl-C in a terminal sends SIGINT; one line says the stack stopped and where its data is kept.
        process.kill(stack.pid, "SIGINT");
        const stopped = await waitForLog(
          (log) => log.split("\n").find((line) => line.startsWith("Notes service stopped")),
          "stop line",
          stack.logFile,
        );
        expect(stopped).toBe(`Notes service stopped; its data is saved in ${dataDir} for the next npm start.`);
      } finally {
        await stack.stop();
      }
      expect(existsSync(lockFile(dataDir))).toBe(false);
    },
    120_000,
  );
});
