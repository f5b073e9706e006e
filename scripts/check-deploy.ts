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
 *    `.ts` imports, `node:` built-ins, and bare names the map sends to `npm:`;
 *    every relative import, dynamic ones too, in a form the CLI's upload walk
 *    matches (`check-deploy/upload-walk.ts`).
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
import { probes, readUntilEvent, streamProbeMs } from "./check-deploy/probes.ts";
import { uploadWalkSpecifiers } from "./check-deploy/upload-walk.ts";

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

/** What the CLI's upload walk finds in each module, read once however many functions import it. */
const walkedByModule = new Map<string, Set<string>>();
function walkedFrom(specifier: string): Set<string> {
  let walked = walkedByModule.get(specifier);
  if (!walked) {
    walked = new Set(uploadWalkSpecifiers(Deno.readTextFileSync(new URL(specifier))));
    walkedByModule.set(specifier, walked);
  }
  return walked;
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
    const walked = walkedFrom(module.specifier);
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
        } else if (!walked.has(specifier)) {
          problems.push(
            `${from} in a form the deploy's upload walk does not match (write a dynamic import's specifier on one line: import("${specifier}"))`,
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
    // A Storage that never answers: the attachment probes show what the functions do without it.
    SUPABASE_URL: "http://127.0.0.1:9",
    SUPABASE_SERVICE_ROLE_KEY: `service-role-${crypto.randomUUID()}`,
    // As a hosted project sets them: a relying party that is not localhost needs its app's origins.
    PASSKEY_RP_ID: "app.example",
    PASSKEY_RP_NAME: "Notes",
    PASSKEY_ORIGINS: "https://app.example",
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
      problems.push(`${name}: scripts/check-deploy/probes.ts has no probe for it`);
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
      if (!probe.anotherAccount) {
        token = body?.data?.accessToken ?? token;
        refreshToken = body?.data?.refreshToken ?? refreshToken;
      }
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
