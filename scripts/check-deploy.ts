/**
 * Checks every Edge Function the way `supabase functions deploy --use-api`
 * ships it, and then runs it there:
 *
 * 1. supabase/config.toml has a `[functions.<name>]` block for each function
 *    folder (and none for a missing one), with `verify_jwt = false`, the
 *    folder's `index.ts` as entrypoint and the functions' own import map,
 *    `supabase/functions/deno.json`, which holds `imports` only (no
 *    `nodeModulesDir`: the upload never includes `node_modules`).
 * 2. Each function's import graph stays inside `supabase/functions/`: relative
 *    `.ts` imports, `node:` built-ins, and bare names the map sends to `npm:`.
 * 3. Exactly what the CLI uploads (the import map and the files the
 *    entrypoints reach; supabase/cli `pkg/function/deploy.go`, `writeForm` and
 *    `WalkImportPaths`) is copied to an empty folder. There, with an empty Deno
 *    cache and no `node_modules`, every entrypoint is type-checked and bundled,
 *    then booted with plain `deno run` (network and environment only, as the
 *    edge runtime grants) and made to answer a request that reaches the
 *    database: PostgreSQL from DATABASE_URL, else a fresh embedded PGlite.
 *
 * Usage: `npm run check:deploy`; exits 1 and lists every problem found.
 */
import { parse } from "smol-toml";
import { startEmbeddedPostgres } from "../dev/embedded-postgres.ts";
import { functionNames, functionsDir } from "../dev/functions.ts";
import { migrate } from "../dev/migrate.ts";
import { runCommand, startDeno } from "../dev/processes.ts";

const repoRoot = new URL("../", import.meta.url);
const supabaseDir = new URL("supabase/", repoRoot);
const expectedImportMap = new URL("supabase/functions/deno.json", repoRoot);

interface FunctionBlock {
  verify_jwt?: unknown;
  entrypoint?: unknown;
  import_map?: unknown;
}

interface ModuleInfo {
  specifier: string;
  kind?: string;
  error?: string;
  dependencies?: {
    specifier: string;
    code?: { specifier?: string };
    type?: { specifier?: string };
  }[];
}

/** Problems with the config.toml blocks; config paths are relative to supabase/, as the CLI reads them. */
function checkConfig(
  names: string[],
  blocks: Record<string, FunctionBlock>,
): string[] {
  const problems: string[] = [];
  for (const name of names) {
    const block = blocks[name];
    if (!block) {
      problems.push(
        `${name}: no [functions.${name}] block in supabase/config.toml`,
      );
      continue;
    }
    if (block.verify_jwt !== false) {
      problems.push(
        `${name}: verify_jwt must be false (the function checks its own tokens)`,
      );
    }
    const entrypoint = typeof block.entrypoint === "string" ? new URL(block.entrypoint, supabaseDir).href : undefined;
    if (entrypoint !== new URL(`${name}/index.ts`, functionsDir).href) {
      problems.push(`${name}: entrypoint must be ./functions/${name}/index.ts`);
    }
    if (importMapOf(block) !== expectedImportMap.href) {
      problems.push(
        `${name}: import_map must be the functions' own "./functions/deno.json"`,
      );
    }
  }
  for (const name of Object.keys(blocks)) {
    if (!names.includes(name)) {
      problems.push(
        `${name}: config.toml has a block but supabase/functions/${name} is missing`,
      );
    }
  }
  return problems;
}

function importMapOf(block: FunctionBlock | undefined): string | undefined {
  return typeof block?.import_map === "string" ? new URL(block.import_map, supabaseDir).href : undefined;
}

/** Problems with the import map itself: what the upload carries must resolve without node_modules. */
function checkImportMap(path: string, map: Record<string, unknown>): string[] {
  const extra = Object.keys(map).filter((key) => key !== "imports");
  return extra.length > 0 ? [`${path} must hold only "imports"; it also has ${extra.join(", ")}`] : [];
}

/** The target of a bare specifier under the import map: an exact key, or the longest "prefix/" key. */
function mapBareSpecifier(
  specifier: string,
  imports: Record<string, string>,
): string | undefined {
  if (specifier in imports) return imports[specifier];
  const prefix = Object.keys(imports)
    .filter((key) => key.endsWith("/") && specifier.startsWith(key))
    .sort((a, b) => b.length - a.length)[0];
  return prefix === undefined ? undefined : imports[prefix] + specifier.slice(prefix.length);
}

function relative(url: string): string {
  return url.startsWith(repoRoot.href) ? url.slice(repoRoot.href.length) : url;
}

/** Problems in one function's import graph, and the repository files it reaches (what the CLI uploads). */
function checkGraph(
  name: string,
  modules: ModuleInfo[],
  imports: Record<string, string>,
) {
  const problems: string[] = [];
  const files: string[] = [];
  for (const module of modules) {
    if (module.error) {
      problems.push(
        `${name}: ${relative(module.specifier)} does not resolve: ${module.error}`,
      );
    }
    // Files of npm packages are the bundler's business; only this repository's own modules are checked.
    if (
      module.kind !== "esm" || !module.specifier.startsWith(functionsDir.href)
    ) continue;
    files.push(relative(module.specifier));
    for (const dependency of module.dependencies ?? []) {
      const from = `${name}: ${relative(module.specifier)} imports "${dependency.specifier}"`;
      const { specifier } = dependency;
      if (specifier.startsWith("node:")) continue;
      if (specifier.startsWith("./") || specifier.startsWith("../")) {
        const resolved = dependency.code?.specifier ??
          dependency.type?.specifier ?? "";
        if (!resolved.startsWith(functionsDir.href)) {
          problems.push(
            `${from}, outside supabase/functions/, which the deploy does not upload`,
          );
        } else if (!/\.(ts|tsx|js|mjs|jsx)$/.test(resolved)) {
          // The CLI's upload follows only relative imports that carry a file extension.
          problems.push(
            `${from} without a file extension, which the deploy would not upload`,
          );
        }
        continue;
      }
      const target = mapBareSpecifier(specifier, imports);
      if (target === undefined) {
        problems.push(
          `${from}, which the import map does not map (inline npm:, jsr: or URL imports are not allowed)`,
        );
      } else if (!target.startsWith("npm:")) {
        problems.push(
          `${from}, mapped to "${target}" rather than an npm: package`,
        );
      }
    }
  }
  return { problems, files };
}

function deno(
  args: string[],
  options: { cwd: string | URL; env?: Record<string, string> },
) {
  return runCommand(Deno.execPath(), args, options);
}

/** Copies the upload (import map and reached files) into a new folder, laid out as in the repository. */
async function stageUpload(files: Iterable<string>): Promise<string> {
  const stage = await Deno.makeTempDir({ prefix: "notes-deploy-" });
  for (const file of files) {
    const target = `${stage}/${file}`;
    await Deno.mkdir(target.slice(0, target.lastIndexOf("/")), {
      recursive: true,
    });
    await Deno.copyFile(new URL(file, repoRoot), target);
  }
  return stage;
}

/** One request a booted function must answer, and what it stores for the requests after it. */
interface Probe {
  name: string;
  path: string;
  method: string;
  body?: Record<string, unknown>;
  /** Send the signed-up user's token beside the apikey. */
  authorized?: boolean;
  /** Also send the mail-dispatch secret as a bearer token. */
  dispatchSecret?: boolean;
  /** An event stream, which never ends by itself: read until this event comes, then closed. */
  untilEvent?: string;
  /** A browser navigation (a provider sign-in's start and return): sent as a browser would, without an apikey. */
  browserNavigation?: true;
  status: number;
  /** The error `code` the answer must carry. */
  code?: string;
}

/** How long a probe's event stream may take to send the event it waits for. */
const streamProbeMs = 30_000;

/**
 * Reads the event stream of `response` until an event named `event` comes,
 * then closes it; answers what was read, or why it never came.
 */
async function readUntilEvent(response: Response, event: string): Promise<{ reached: boolean; text: string }> {
  const reader = response.body?.getReader();
  const decoder = new TextDecoder();
  let text = "";
  if (!reader) return { reached: false, text: "no body" };
  try {
    while (!new RegExp(`^event: ${event}$`, "m").test(text)) {
      const { done, value } = await reader.read();
      if (done) return { reached: false, text };
      text += decoder.decode(value, { stream: true });
    }
    return { reached: true, text };
  } catch (error) {
    return { reached: false, text: `${text}${error}` };
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/**
 * A request per function, in an order where each can rely on the ones before:
 * sign up, sign in, reset, then the notes round trip on one note. Each one
 * reaches the database, so the driver and the SQL run in the staged copy.
 */
function probes(
  email: string,
  password: string,
  noteId: () => string,
  refreshToken: () => string,
): Probe[] {
  return [
    {
      name: "auth-register",
      path: "/auth-register",
      method: "POST",
      body: { name: "Deploy", email, password },
      status: 201,
    },
    {
      name: "auth",
      path: "/auth/login",
      method: "POST",
      body: { email, password },
      status: 200,
    },
    {
      name: "auth-login",
      path: "/auth-login",
      method: "POST",
      body: { email, password },
      status: 200,
    },
    {
      name: "auth-refresh",
      path: "/auth-refresh",
      method: "POST",
      get body() {
        return { refreshToken: refreshToken() };
      },
      status: 200,
    },
    {
      name: "auth-user",
      path: "/auth-user",
      method: "GET",
      authorized: true,
      status: 200,
    },
    {
      name: "auth-sessions",
      path: "/auth-sessions",
      method: "GET",
      authorized: true,
      status: 200,
    },
    {
      name: "auth-events",
      path: "/auth-events?limit=5",
      method: "GET",
      authorized: true,
      status: 200,
    },
    { name: "auth-mfa", path: "/auth-mfa", method: "GET", authorized: true, status: 200 },
    // The deploy's account has not verified its address: the statement that enrolls refuses it in Postgres.
    {
      name: "auth-mfa-enroll",
      path: "/auth-mfa-enroll",
      method: "POST",
      body: { password },
      authorized: true,
      status: 403,
    },
    {
      name: "auth-reauthenticate",
      path: "/auth-reauthenticate",
      method: "POST",
      body: { password },
      authorized: true,
      status: 200,
    },
    // Not the pending factor's id: the statement that reads it finds none.
    {
      name: "auth-mfa-activate",
      path: "/auth-mfa-activate",
      method: "POST",
      body: { factorId: "00000000-0000-4000-8000-000000000000", code: "000000" },
      authorized: true,
      status: 404,
    },
    // The account has no active factor, so its token names none: these answer 404 before any statement.
    ...[
      { name: "auth-mfa-verify", body: { code: "000000" } },
      { name: "auth-mfa-recover", body: { recoveryCode: "aaaaa-bbbbb-ccccc-ddddd" } },
      { name: "auth-mfa-unenroll", body: { factorId: "00000000-0000-4000-8000-000000000000", code: "000000" } },
      { name: "auth-mfa-recovery-codes", body: { code: "000000" } },
    ].map(({ name, body }) => ({ name, path: `/${name}`, method: "POST", body, authorized: true, status: 404 })),
    // The deploy's user is no admin: the role check in Postgres answers 403.
    {
      name: "admin-users",
      path: "/admin-users/events?id=00000000-0000-4000-8000-000000000000",
      method: "GET",
      authorized: true,
      status: 403,
    },
    {
      name: "auth-resend-verification",
      path: "/auth-resend-verification",
      method: "POST",
      body: { email },
      status: 200,
    },
    {
      name: "auth-verify-email",
      path: "/auth-verify-email",
      method: "POST",
      // With the account's token, a wrong code: the one statement that verifies runs, and says no.
      body: { email, code: "000000" },
      authorized: true,
      status: 400,
    },
    {
      name: "auth-change-password",
      path: "/auth-change-password",
      method: "POST",
      body: { currentPassword: password, newPassword: password },
      authorized: true,
      status: 200,
    },
    {
      name: "auth-request-password-reset",
      path: "/auth-request-password-reset",
      method: "POST",
      body: { email },
      status: 200,
    },
    {
      name: "auth-create-password",
      path: "/auth-create-password",
      method: "POST",
      body: { email, password, code: "000000" },
      status: 400,
    },
    {
      name: "notes-create",
      path: "/notes-create",
      method: "POST",
      body: { title: "Deployed" },
      authorized: true,
      status: 201,
    },
    { name: "notes-fetch", path: "/notes-fetch?limit=5&q=deployed", method: "GET", authorized: true, status: 200 },
    { name: "notes-changes", path: "/notes-changes?limit=5", method: "GET", authorized: true, status: 200 },
    // From the feed's end: it reads where that is, and says it is live.
    {
      name: "notes-stream",
      path: "/notes-stream",
      method: "GET",
      authorized: true,
      untilEvent: "ready",
      status: 200,
    },
    {
      name: "notes-get",
      get path() {
        return `/notes-get?id=${noteId()}`;
      },
      method: "GET",
      authorized: true,
      status: 200,
    },
    {
      name: "notes-save",
      path: "/notes-save",
      method: "POST",
      get body() {
        return { id: noteId(), status: "PUBLISHED" };
      },
      authorized: true,
      status: 200,
    },
    {
      name: "notes-delete",
      get path() {
        return `/notes-delete?id=${noteId()}`;
      },
      method: "DELETE",
      authorized: true,
      status: 200,
    },
    // Ends the account's other sessions and keeps this one, for the last signed-in call: deleting the account.
    {
      name: "auth-logout",
      path: "/auth-logout",
      method: "POST",
      body: { scope: "others" },
      authorized: true,
      status: 200,
    },
    // Provider sign-in, with no provider configured here. The start refuses an unknown provider as JSON, never as a
    // redirect; a link's browser step, the return and the code's exchange look the unknown flow, state and code up
    // in the database.
    {
      name: "auth-oauth-authorize",
      path: "/auth-oauth-authorize?provider=nobody&redirect_to=https%3A%2F%2Fapp.example%2Fsigned-in",
      method: "GET",
      browserNavigation: true,
      status: 400,
      code: "invalid_request",
    },
    {
      name: "auth-oauth-callback",
      path: "/auth-oauth-callback/nobody?state=never-started&code=x",
      method: "GET",
      browserNavigation: true,
      status: 400,
      code: "invalid_state",
    },
    {
      name: "auth-identities-link-authorize",
      path: `/auth-identities-link-authorize?flow=${"a".repeat(43)}`,
      method: "GET",
      browserNavigation: true,
      status: 400,
      code: "invalid_state",
    },
    {
      name: "auth-oauth-token",
      path: "/auth-oauth-token",
      method: "POST",
      body: { code: "never-given", codeVerifier: "v".repeat(43) },
      status: 400,
      code: "invalid_code",
    },
    { name: "auth-identities", path: "/auth-identities", method: "GET", authorized: true, status: 200 },
    // A link code never given: the statement that completes a link looks it up, and says no.
    {
      name: "auth-identities-link-complete",
      path: "/auth-identities-link-complete",
      method: "POST",
      body: { code: "never-given" },
      authorized: true,
      status: 400,
      code: "invalid_code",
    },
    // Without a token: the function boots, reads its body and refuses before any provider would be called.
    {
      name: "auth-identities-link",
      path: "/auth-identities-link",
      method: "POST",
      body: { provider: "nobody", redirectTo: "https://app.example/settings" },
      status: 401,
      code: "token_missing",
    },
    // With the token: no provider is configured here, so the body is refused, naming the field, before any statement.
    {
      name: "auth-reauthenticate-provider",
      path: "/auth-reauthenticate-provider",
      method: "POST",
      body: { provider: "nobody", redirectTo: "https://app.example/settings" },
      authorized: true,
      status: 400,
      code: "invalid_request",
    },
    {
      name: "auth-delete-account",
      path: "/auth-delete-account",
      method: "POST",
      body: { password },
      authorized: true,
      status: 200,
    },
    // The provider is a closed local port, so the queued reset mail's delivery fails and is retried later.
    { name: "mail-dispatch", path: "/mail-dispatch", method: "POST", body: {}, dispatchSecret: true, status: 200 },
  ];
}

/** Boots each function alone in the staged folder and checks its answer to its probe. */
async function bootEach(
  stage: string,
  importMapPath: string,
  names: string[],
  databaseUrl: string,
  denoDir: string,
): Promise<string[]> {
  const problems: string[] = [];
  const apiKey = "deploy-check-anon-key";
  const dispatchSecret = crypto.randomUUID() + crypto.randomUUID();
  const env = {
    DENO_DIR: denoDir,
    DENO_SERVE_ADDRESS: "tcp:127.0.0.1:0",
    DATABASE_URL: databaseUrl,
    DB_POOL_MAX: "1",
    JWT_SECRET: crypto.randomUUID() + crypto.randomUUID(),
    MFA_SECRET_KEY: crypto.randomUUID() + crypto.randomUUID(),
    SUPABASE_ANON_KEY: apiKey,
    RESEND_API_KEY: "re_deploy_check",
    MAIL_FROM: "Notes <no-reply@example.com>",
    RESEND_API_URL: "http://127.0.0.1:9",
    MAIL_DISPATCH_SECRET: dispatchSecret,
  };
  let token = "";
  let noteId = "";
  let refreshToken = "";
  const planned = probes(
    `deploy-${Date.now()}@example.com`,
    "deploy check password",
    () => noteId,
    () => refreshToken,
  );
  for (const name of names) {
    if (!planned.some((probe) => probe.name === name)) {
      problems.push(`${name}: scripts/check-deploy.ts has no probe for it`);
    }
  }
  for (const probe of planned.filter((probe) => names.includes(probe.name))) {
    const child = await startDeno(
      `supabase/functions/${probe.name}/index.ts`,
      env,
      /Listening on (http:\/\/\S+?)\/?\s/,
      {
        // What the edge runtime grants a function: the network and its environment; its own files to read.
        flags: [
          "--config",
          importMapPath,
          "--no-lock",
          "--allow-net",
          "--allow-env",
          "--allow-read=.",
        ],
        cwd: stage,
      },
    );
    try {
      const response = await fetch(`${child.ready[1]}${probe.path}`, {
        method: probe.method,
        // No probe expects a redirect: one would be followed nowhere, and reported below.
        redirect: "manual",
        headers: probe.browserNavigation ? {} : {
          "content-type": "application/json",
          apikey: apiKey,
          ...(probe.authorized ? { authorization: token } : {}),
          ...(probe.dispatchSecret ? { authorization: `Bearer ${dispatchSecret}` } : {}),
        },
        body: probe.body && JSON.stringify(probe.body),
        signal: probe.untilEvent ? AbortSignal.timeout(streamProbeMs) : undefined,
      });
      const { untilEvent } = probe;
      const streamed = untilEvent !== undefined && response.ok;
      if (streamed) {
        const { reached, text } = await readUntilEvent(response, untilEvent);
        if (!reached) {
          problems.push(
            `${probe.name}: ${probe.path} never sent its ${untilEvent} event: ${text}\n${child.output()}`,
          );
        }
      }
      const location = response.headers.get("location");
      const body = streamed || location !== null ? undefined : await response.json();
      if (response.status !== probe.status || (probe.code !== undefined && body?.code !== probe.code)) {
        problems.push(
          `${probe.name}: ${probe.method} ${probe.path} answered ${response.status}, expected ${probe.status}${
            probe.code ? ` ${probe.code}` : ""
          }: ${JSON.stringify(body)}\n${child.output()}`,
        );
      }
      if (location !== null) {
        problems.push(`${probe.name}: ${probe.method} ${probe.path} redirected to ${location}\n${child.output()}`);
      }
      token = body?.data?.accessToken ?? token;
      refreshToken = body?.data?.refreshToken ?? refreshToken;
      if (probe.name === "notes-create") noteId = body?.data?.id ?? "";
      console.log(
        `  ${probe.name}: ${probe.method} ${probe.path} -> ${response.status}`,
      );
    } finally {
      await child.stop();
    }
  }
  return problems;
}

async function main(): Promise<string[]> {
  const names = await functionNames();
  const config = parse(
    await Deno.readTextFile(new URL("config.toml", supabaseDir)),
  ) as {
    functions?: Record<string, FunctionBlock>;
  };
  const blocks = config.functions ?? {};
  const problems = checkConfig(names, blocks);
  // Staged as the config names it, so a wrong map fails below the way the deploy's build would.
  const importMapPath = relative(
    importMapOf(blocks[names[0]]) ?? expectedImportMap.href,
  );
  let map: { imports?: Record<string, string> };
  try {
    map = JSON.parse(await Deno.readTextFile(new URL(importMapPath, repoRoot)));
  } catch (error) {
    return [
      ...problems,
      `${importMapPath} cannot be read as an import map: ${error}`,
    ];
  }
  problems.push(...checkImportMap(importMapPath, map));
  const imports = map.imports ?? {};

  const uploaded = new Set<string>([importMapPath]);
  for (const name of names) {
    const info = await deno([
      "info",
      "--json",
      `supabase/functions/${name}/index.ts`,
    ], { cwd: repoRoot });
    if (!info.ok) {
      problems.push(`${name}: deno info failed:\n${info.stderr}`);
      continue;
    }
    const graph = checkGraph(
      name,
      (JSON.parse(info.stdout) as { modules: ModuleInfo[] }).modules,
      imports,
    );
    problems.push(...graph.problems);
    for (const file of graph.files) uploaded.add(file);
  }

  const stage = await stageUpload(uploaded);
  const denoDir = await Deno.makeTempDir({ prefix: "notes-deploy-cache-" });
  const embeddedDir = Deno.env.get("DATABASE_URL") ? undefined : await Deno.makeTempDir({ prefix: "notes-deploy-db-" });
  const embedded = embeddedDir ? await startEmbeddedPostgres(embeddedDir) : undefined;
  try {
    console.log(
      `Staged ${uploaded.size} files as the deploy uploads them (${importMapPath} as import map); empty Deno cache`,
    );
    const entrypoints = names.map((name) => `supabase/functions/${name}/index.ts`);
    const isolated = { cwd: stage, env: { DENO_DIR: denoDir } };
    const check = await deno([
      "check",
      "--quiet",
      "--config",
      importMapPath,
      "--no-lock",
      ...entrypoints,
    ], isolated);
    if (!check.ok) {
      return [
        ...problems,
        `deno check of the uploaded files failed:\n${check.stderr}`,
      ];
    }
    console.log(`  deno check: ${names.length} entrypoints`);
    const sizes: string[] = [];
    for (const [index, entrypoint] of entrypoints.entries()) {
      const bundle = await deno(
        [
          "bundle",
          "--quiet",
          "--config",
          importMapPath,
          "--no-lock",
          "--platform",
          "deno",
          "-o",
          "bundle.js",
          entrypoint,
        ],
        isolated,
      );
      if (!bundle.ok) {
        problems.push(
          `${entrypoint}: deno bundle of the uploaded files failed:\n${bundle.stderr}`,
        );
      } else {sizes.push(
          `${names[index]} ${
            ((await Deno.stat(`${stage}/bundle.js`)).size / 1_048_576).toFixed(
              2,
            )
          } MB`,
        );}
    }
    if (problems.length > 0) return problems;
    console.log(
      `  deno bundle: ${names.length} entrypoints (${sizes.join(", ")})`,
    );
    const databaseUrl = embedded?.url ?? Deno.env.get("DATABASE_URL") ?? "";
    await migrate(databaseUrl, () => {});
    return await bootEach(stage, importMapPath, names, databaseUrl, denoDir);
  } finally {
    await embedded?.stop();
    await Deno.remove(stage, { recursive: true });
    await Deno.remove(denoDir, { recursive: true });
    if (embeddedDir) await Deno.remove(embeddedDir, { recursive: true });
  }
}

const problems = await main();
if (problems.length > 0) {
  console.error(problems.join("\n"));
  Deno.exitCode = 1;
} else {
  console.log(
    "Every function type-checks, bundles, boots and answers from exactly what the deploy uploads.",
  );
}
