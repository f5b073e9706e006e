/**
 * A Vite plugin for `npm run demo`: it hands the app the base URL and apikey
 * of the functions to call. With NOTES_URL given it uses those functions.
 * Otherwise it looks on PORT's port (54321 by default) for a stack that
 * already runs (`npm start`), checks that it is this service and takes the
 * apikey, and uses it; with none there it starts one (`dev/stack.ts`, as
 * `npm start` does, its log shown in the terminal so codes can be read there).
 * What it cannot do it says in one line, without a stack trace.
 *
 * The sign-in providers the page offers are those of NOTES_PROVIDERS
 * (comma-separated), else of OIDC_PROVIDERS (the service's own setting, which
 * a stack started here reads from the same environment with the rest of its
 * OIDC_* settings) and `local` (the test provider a stack started with
 * LOCAL_IDENTITY_PROVIDER=true has), that the stack has: each is asked of the
 * stack, so a button never leads to a provider it does not know. With none, the
 * page and the terminal say how to start a stack with one. The browser comes
 * back from a provider to the demo's page, so the service's
 * OAUTH_REDIRECT_URLS must list it (`http://127.0.0.1:5173/` for Vite's first
 * port).
 *
 * @example
 * ```ts
 * export default defineConfig({ plugins: [notesStack()] });
 * ```
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Plugin } from "vite";
import { stackDenoArgs } from "../../dev/stack-command.ts";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

/** `npm start`'s port when PORT is unset (dev/settings.ts). */
const defaultPort = 54321;
/** The apikey `npm start` uses when SUPABASE_ANON_KEY is unset (dev/settings.ts). */
const devAnonKey = "local-dev-anon-key-not-for-production";
/** How long a stack that is still starting (it holds requests until it is ready) may take to answer. */
const answerTimeoutMs = 30_000;

const pointAtAStack =
  'or NOTES_URL and NOTES_ANON_KEY to the Base URL and apikey it printed (docs/clients.md, "Demo app")';

interface Functions {
  url: string;
  anonKey: string;
  /** Where the stack is: its terminal shows the codes it mails. */
  stack: "started" | "running" | "given";
}

/**
 * A situation the developer can fix, said in one line: Vite prints an error's
 * `stack` when the server cannot start, so it holds only the message.
 */
class DemoStartError extends Error {
  constructor(message: string) {
    super(`npm run demo: ${message}`);
    this.name = "DemoStartError";
    this.stack = this.message;
  }
}

/** The title of this service's OpenAPI document, which the stack serves at /openapi.json. */
function serviceTitle(): string {
  const document = JSON.parse(readFileSync(`${repoRoot}openapi.json`, "utf8")) as { info: { title: string } };
  return document.info.title;
}

function connectionRefused(error: unknown): boolean {
  return (error as { cause?: { code?: string } }).cause?.code === "ECONNREFUSED";
}

/**
 * The functions of the stack listening on `port`, or undefined when nothing
 * listens there. Throws DemoStartError when something else answers there, or
 * the stack refuses `anonKey`.
 */
async function runningStack(port: number, anonKey: string): Promise<Functions | undefined> {
  const origin = `http://127.0.0.1:${port}`;
  const notThisService = new DemoStartError(
    `port ${port} is taken, but not by this service's stack. Set PORT to the port of a running \`npm start\`, ${pointAtAStack}`,
  );
  // This service's document at /openapi.json, and its answer to an empty login: more than a copy of the file.
  let title: unknown;
  try {
    const answer = await fetch(`${origin}/openapi.json`, { signal: AbortSignal.timeout(answerTimeoutMs) });
    const document = answer.ok ? await answer.json() as { info?: { title?: unknown } } : undefined;
    title = document?.info?.title;
  } catch (error) {
    if (connectionRefused(error)) return undefined;
    throw notThisService;
  }
  if (title !== serviceTitle()) throw notThisService;
  const url = `${origin}/functions/v1`;
  // Past the apikey check an empty login is refused for its body (400), before anything is looked up.
  const probe = await fetch(`${url}/auth/login`, {
    method: "POST",
    headers: { apikey: anonKey, "Content-Type": "application/json" },
    body: "{}",
    signal: AbortSignal.timeout(answerTimeoutMs),
  });
  const { code } = await probe.json().catch(() => ({})) as { code?: string };
  if (code === "invalid_request") return { url, anonKey, stack: "running" };
  if (code === "invalid_api_key") {
    throw new DemoStartError(
      `the stack on port ${port} refuses the apikey "${anonKey}". Set NOTES_ANON_KEY to the apikey it printed (docs/clients.md, "Demo app")`,
    );
  }
  throw notThisService;
}

/** Starts `dev/stack.ts` and resolves with its base URL and apikey once it is ready. */
function startStack(port: string): Promise<{ functions: Functions; child: ChildProcess }> {
  const child = spawn("deno", stackDenoArgs, {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let output = "";
    const onData = (chunk: Buffer, to: NodeJS.WriteStream) => {
      to.write(chunk);
      output += chunk.toString();
      const url = /Ready on (\S+)/.exec(output)?.[1];
      const anonKey = /apikey:\s+(\S+)/.exec(output)?.[1];
      if (url && anonKey) resolve({ functions: { url, anonKey, stack: "started" }, child });
    };
    child.stdout?.on("data", (chunk: Buffer) => onData(chunk, process.stdout));
    child.stderr?.on("data", (chunk: Buffer) => onData(chunk, process.stderr));
    child.on("error", (error) => reject(new DemoStartError(`cannot run deno to start the stack: ${error.message}`)));
    // The stack has said why in its own line above.
    child.on("exit", () =>
      reject(
        new DemoStartError(
          `no stack answers on port ${port} and none could start here. To use one that runs, set PORT to its port, ${pointAtAStack}`,
        ),
      ));
  });
}

/** Where the page tells a local user to read the codes the stack mails; empty for a deployed project. */
function codesHint({ url, stack }: Functions): string {
  if (stack === "started") return "in the terminal where `npm run demo` runs";
  if (stack === "running") return "in the terminal where the stack runs (`npm start`)";
  const { hostname } = new URL(url);
  return ["127.0.0.1", "localhost", "[::1]"].includes(hostname) ? "in the terminal where the stack runs" : "";
}

/** Where the demo's functions are: NOTES_URL, else a stack on PORT's port, else one started here. */
async function findFunctions(): Promise<{ functions: Functions; child?: ChildProcess }> {
  const given = process.env.NOTES_URL;
  if (given) return { functions: { url: given, anonKey: process.env.NOTES_ANON_KEY ?? "", stack: "given" } };
  // The port and key `npm start` takes from the same environment.
  const portText = process.env.PORT || String(defaultPort);
  const port = Number(portText);
  const anonKey = process.env.NOTES_ANON_KEY || process.env.SUPABASE_ANON_KEY || devAnonKey;
  // PORT=0 (any free port) names no running stack, and the stack itself refuses a PORT that is no port.
  const running = Number.isInteger(port) && port > 0 && port < 65_536 ? await runningStack(port, anonKey) : undefined;
  return running ? { functions: running } : await startStack(portText);
}

/** The providers to look for: NOTES_PROVIDERS, else OIDC_PROVIDERS and the local stack's test provider `local`. */
function wantedProviders(): string[] {
  const listed = process.env.NOTES_PROVIDERS ?? [process.env.OIDC_PROVIDERS ?? "", "local"].join(",");
  return [...new Set(listed.split(",").map((name) => name.trim()).filter(Boolean))];
}

/**
 * Whether the functions at `url` have the sign-in provider `name`. A start
 * of a sign-in with it and a return URL no stack allows is refused before
 * anything is stored: for the provider when the stack has none of that name,
 * else for the return URL.
 */
async function hasProvider(url: string, name: string): Promise<boolean> {
  const query = new URLSearchParams({
    provider: name,
    redirect_to: "http://provider-probe.invalid/",
    code_challenge: "A".repeat(43),
    code_challenge_method: "S256",
  });
  try {
    const answer = await fetch(`${url}/auth/oauth/authorize?${query}`, {
      redirect: "manual",
      signal: AbortSignal.timeout(answerTimeoutMs),
    });
    const { fields } = await answer.json().catch(() => ({})) as { fields?: { field?: string }[] };
    return answer.status === 400 && Array.isArray(fields) && fields.length > 0 &&
      !fields.some(({ field }) => field === "provider");
  } catch {
    return false;
  }
}

/** How to try provider sign-in with this stack, for a local one that has no provider; empty otherwise. */
function providerHint({ url, stack }: Functions): string {
  if (stack === "started") {
    return "No sign-in provider is set up. To try one, stop `npm run demo` and run `LOCAL_IDENTITY_PROVIDER=true npm run demo`.";
  }
  if (stack === "running") {
    return "The stack already running has no sign-in provider. To try one, stop it and run " +
      "`LOCAL_IDENTITY_PROVIDER=true npm start`, then `npm run demo` again.";
  }
  const { hostname } = new URL(url);
  return ["127.0.0.1", "localhost", "[::1]"].includes(hostname)
    ? "This stack has no sign-in provider. To try one, start it with `LOCAL_IDENTITY_PROVIDER=true`."
    : "";
}

/**
 * Provides `import.meta.env.VITE_NOTES_URL`, `VITE_NOTES_ANON_KEY`,
 * `VITE_NOTES_CODES_HINT`, `VITE_NOTES_PROVIDERS` and `VITE_NOTES_PROVIDER_HINT`,
 * using a running stack or starting one when none is named.
 */
export function notesStack(): Plugin {
  let child: ChildProcess | undefined;
  let functions: Functions | undefined;
  let providers: string[] = [];
  let hint = "";
  return {
    name: "notes-stack",
    async config(_config, { command }) {
      if (command !== "serve" && !process.env.NOTES_URL) {
        throw new DemoStartError("set NOTES_URL and NOTES_ANON_KEY to build the demo for a deployed project");
      }
      ({ functions, child } = await findFunctions());
      // A stack started here ends with this process, however it ends (a Vite that cannot listen exits at once).
      if (child) process.once("exit", () => child?.kill("SIGTERM"));
      const found = functions;
      const wanted = wantedProviders();
      const has = await Promise.all(wanted.map((name) => hasProvider(found.url, name)));
      providers = wanted.filter((_name, index) => has[index]);
      hint = providers.length === 0 ? providerHint(functions) : "";
      return {
        define: {
          "import.meta.env.VITE_NOTES_URL": JSON.stringify(functions.url),
          "import.meta.env.VITE_NOTES_ANON_KEY": JSON.stringify(functions.anonKey),
          "import.meta.env.VITE_NOTES_CODES_HINT": JSON.stringify(codesHint(functions)),
          "import.meta.env.VITE_NOTES_PROVIDERS": JSON.stringify(providers.join(",")),
          "import.meta.env.VITE_NOTES_PROVIDER_HINT": JSON.stringify(hint),
        },
      };
    },
    configureServer(server) {
      server.httpServer?.once("listening", () => {
        if (!functions) return;
        const { info } = server.config.logger;
        const how = { started: "started here", running: "already running", given: "NOTES_URL" }[functions.stack];
        info(`  Notes stack:   ${functions.url} (${how})`);
        info(`  API reference: ${new URL(functions.url).origin}/docs`);
        info(`  Sign-in with:  ${providers.length > 0 ? providers.join(", ") : `no provider. ${hint}`.trim()}`);
      });
      server.httpServer?.once("close", () => child?.kill("SIGTERM"));
    },
  };
}
