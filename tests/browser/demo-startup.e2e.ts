/**
 * `npm run demo` as a newcomer runs it: after `npm start`, it serves the app
 * against that stack (found on PORT's port, checked to be this service, its
 * apikey accepted) and starts no second one; with none running it starts one
 * and stops it with itself; and what it cannot do (another server on the
 * port, a stack that cannot start) it says in one line naming NOTES_URL, with
 * no stack trace.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningStack, startStack, testAnonKey } from "../../dev/harness/stack.ts";
import { freePort } from "./demo-app.ts";

const repoRoot = new URL("../../", import.meta.url).pathname;

interface DemoRun {
  /** All it printed so far, stdout and stderr. */
  output(): string;
  /** Its exit code, once it has exited. */
  exited: Promise<number | null>;
  /** Stops it (and what it started) and waits until it has exited. */
  stop(): Promise<void>;
}

/** `npm run demo` serving on `appPort`, with `env` over this process's environment minus NOTES_URL. */
function runDemo(appPort: number, env: Record<string, string>): DemoRun {
  const { NOTES_URL: _url, NOTES_ANON_KEY: _key, NOTES_PROVIDERS: _providers, ...inherited } = process.env;
  // Its own process group, so stopping it reaches npm, Vite and a stack Vite started.
  const child: ChildProcess = spawn("npm", ["run", "demo", "--", "--port", String(appPort), "--strictPort"], {
    cwd: repoRoot,
    env: { ...inherited, NO_COLOR: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    output: () => output,
    exited,
    async stop() {
      const running = child.pid !== undefined && child.exitCode === null && child.signalCode === null;
      if (running) process.kill(-child.pid, "SIGTERM");
      await exited;
    },
  };
}

/** Waits until `run` has printed a match of `pattern`, failing with what it printed if it exits first. */
async function printed(run: DemoRun, pattern: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
  let exitCode: number | null | undefined;
  void run.exited.then((code) => (exitCode = code));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(run.output());
    if (match) return match;
    if (exitCode !== undefined || Date.now() > deadline) {
      throw new Error(`npm run demo never printed ${pattern} (exit ${exitCode}):\n${run.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** What a failed `npm run demo` printed, once it has exited with 1. */
async function failure(run: DemoRun): Promise<string> {
  expect(await run.exited).toBe(1);
  const output = run.output();
  // Expected situations, said in words: no stack trace of the plugin or of Vite.
  expect(output).not.toMatch(/^\s+at /m);
  return output;
}

/** The app's page and the code it runs, as the browser fetches them from the demo's server. */
async function servedApp(appPort: number): Promise<{ page: string; main: string }> {
  const origin = `http://127.0.0.1:${appPort}`;
  const page = await fetch(`${origin}/`);
  expect(page.status).toBe(200);
  const main = await fetch(`${origin}/src/main.ts`);
  expect(main.status).toBe(200);
  return { page: await page.text(), main: await main.text() };
}

describe("npm run demo beside a stack that runs", () => {
  let stack: RunningStack;

  beforeAll(async () => {
    stack = await startStack();
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it("serves the app against the stack on PORT's port, with its apikey, and starts none of its own", async () => {
    const appPort = await freePort();
    const stackPort = new URL(stack.baseUrl).port;
    // The environment that `npm start` took its port and apikey from.
    const demo = runDemo(appPort, { PORT: stackPort, SUPABASE_ANON_KEY: testAnonKey });
    try {
      await printed(demo, /Local:\s+http:\/\/127\.0\.0\.1:\d+\//);
      expect(demo.output()).toContain(`Notes stack:   ${stack.baseUrl} (already running)`);
      expect(demo.output()).not.toContain("Ready on");
      const { page, main } = await servedApp(appPort);
      expect(page).toContain("<title>Notes demo</title>");
      // The page's code calls the running stack, with the apikey it accepts.
      expect(main).toContain(JSON.stringify(stack.baseUrl));
      expect(main).toContain(JSON.stringify(testAnonKey));
    } finally {
      await demo.stop();
    }
    // The stack it used runs on.
    expect((await fetch(`${new URL(stack.baseUrl).origin}/openapi.json`)).status).toBe(200);
  });

  it("with LOCAL_IDENTITY_PROVIDER=true, offers no provider the running stack lacks, and says how to start one", async () => {
    const appPort = await freePort();
    const demo = runDemo(appPort, {
      PORT: new URL(stack.baseUrl).port,
      SUPABASE_ANON_KEY: testAnonKey,
      LOCAL_IDENTITY_PROVIDER: "true",
    });
    try {
      await printed(demo, /Local:\s+http:\/\/127\.0\.0\.1:\d+\//);
      // The page's code offers no provider: its button would lead to the stack's refusal.
      const providers = await fetch(`http://127.0.0.1:${appPort}/src/providers.ts`);
      expect(await providers.text()).not.toContain('"local"');
      await printed(demo, /Sign-in with: .*$/m);
      expect(demo.output()).toContain(
        "Sign-in with:  no provider. The stack already running has no sign-in provider. To try one, stop it and run " +
          "`LOCAL_IDENTITY_PROVIDER=true npm start`, then `npm run demo` again.",
      );
    } finally {
      await demo.stop();
    }
  });

  it("says in one line to set NOTES_ANON_KEY when the stack refuses the apikey", async () => {
    const demo = runDemo(await freePort(), { PORT: new URL(stack.baseUrl).port, SUPABASE_ANON_KEY: "" });
    const output = await failure(demo);
    expect(output).toMatch(/^npm run demo: the stack on port \d+ refuses the apikey ".+"\. Set NOTES_ANON_KEY .*$/m);
  });
});

describe("npm run demo with no stack running", () => {
  let scratch: string;
  let other: Server | undefined;

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), "notes-demo-"));
  });

  afterAll(async () => {
    await new Promise((resolve) => other ? other.close(resolve) : resolve(undefined));
    rmSync(scratch, { recursive: true, force: true });
  });

  it("starts a stack as npm start does, and stops it when it stops", async () => {
    const [appPort, stackPort] = [await freePort(), await freePort()];
    const demo = runDemo(appPort, { PORT: String(stackPort), PGLITE_DATA_DIR: join(scratch, "pglite") });
    try {
      await printed(demo, /Local:\s+http:\/\/127\.0\.0\.1:\d+\//, 110_000);
      const url = `http://127.0.0.1:${stackPort}/functions/v1`;
      expect(demo.output()).toContain(`Ready on ${url}`);
      expect(demo.output()).toContain(`Notes stack:   ${url} (started here)`);
      expect((await servedApp(appPort)).main).toContain(JSON.stringify(url));
    } finally {
      await demo.stop();
    }
    // The stack gets the same signal as the demo, whose exit is what `stop` waits for: it is gone moments later.
    const stackAnswers = () => fetch(`http://127.0.0.1:${stackPort}/openapi.json`).then(() => true, () => false);
    await expect.poll(stackAnswers, { timeout: 5_000 }).toBe(false);
  }, 120_000);

  it("says in one line how to point it at a stack when another server holds the port", async () => {
    other = createServer((_req, res) => res.writeHead(404).end("not here"));
    const port = await new Promise<number>((resolve) =>
      other?.listen(0, "127.0.0.1", () => resolve((other?.address() as { port: number }).port))
    );
    const output = await failure(runDemo(await freePort(), { PORT: String(port) }));
    expect(output).toContain(
      `npm run demo: port ${port} is taken, but not by this service's stack. Set PORT to the port of a running ` +
        '`npm start`, or NOTES_URL and NOTES_ANON_KEY to the Base URL and apikey it printed (docs/clients.md, "Demo app")',
    );
  });

  it("after the stack's own reason, says in one line how to point it at a stack when none can start", async () => {
    const port = await freePort();
    const output = await failure(runDemo(await freePort(), { PORT: String(port), JWT_SECRET: "short" }));
    expect(output).toMatch(/The stack did not start: JWT_SECRET is 5 bytes/);
    expect(output).toMatch(
      new RegExp(
        `^npm run demo: no stack answers on port ${port} and none could start here\\. ` +
          "To use one that runs, set PORT to its port, or NOTES_URL and NOTES_ANON_KEY .*$",
        "m",
      ),
    );
  });
});
