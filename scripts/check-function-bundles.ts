/**
 * Checks every Edge Function the way `supabase functions deploy` sees it: one
 * entrypoint at a time, with only `supabase/functions/` and the import map
 * uploaded. For each function directory it requires
 *
 * - a `[functions.<name>]` block in supabase/config.toml with `verify_jwt = false`,
 *   the directory's `index.ts` as entrypoint and the root deno.json as import map
 *   (and no block for a function that does not exist);
 * - `deno check` of the entrypoint on its own;
 * - an import graph (`deno info --json`) in which every module of this repository
 *   imports only relative `.ts` files inside `supabase/functions/`, `node:`
 *   built-ins, or bare names that the import map sends to `npm:` packages;
 * - `deno bundle` of the entrypoint on its own.
 *
 * Usage: `deno run --allow-all scripts/check-function-bundles.ts`; exits 1 and
 * lists every problem when one is found.
 */
import { parse } from "smol-toml";

const repoRoot = new URL("../", import.meta.url);
const supabaseDir = new URL("supabase/", repoRoot);
const functionsDir = new URL("functions/", supabaseDir);
const rootImportMap = new URL("deno.json", repoRoot);

interface FunctionBlock {
  verify_jwt?: unknown;
  entrypoint?: unknown;
  import_map?: unknown;
}

interface Dependency {
  specifier: string;
  code?: { specifier?: string; error?: string };
  type?: { specifier?: string; error?: string };
}

interface ModuleInfo {
  specifier: string;
  kind?: string;
  error?: string;
  dependencies?: Dependency[];
}

async function functionNames(): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(functionsDir)) {
    // The CLI skips `_shared`-style folders: they hold code, not functions.
    if (entry.isDirectory && !entry.name.startsWith("_") && !entry.name.startsWith(".")) names.push(entry.name);
  }
  return names.sort();
}

/** Problems with the config.toml blocks; config paths are relative to supabase/, as the CLI reads them. */
function checkConfig(names: string[], blocks: Record<string, FunctionBlock>): string[] {
  const problems: string[] = [];
  for (const name of names) {
    const block = blocks[name];
    if (!block) {
      problems.push(`${name}: no [functions.${name}] block in supabase/config.toml`);
      continue;
    }
    if (block.verify_jwt !== false) {
      problems.push(`${name}: verify_jwt must be false (the function checks its own tokens)`);
    }
    const entrypoint = typeof block.entrypoint === "string" ? new URL(block.entrypoint, supabaseDir).href : undefined;
    if (entrypoint !== new URL(`${name}/index.ts`, functionsDir).href) {
      problems.push(`${name}: entrypoint must be ./functions/${name}/index.ts`);
    }
    const importMap = typeof block.import_map === "string" ? new URL(block.import_map, supabaseDir).href : undefined;
    if (importMap !== rootImportMap.href) {
      problems.push(`${name}: import_map must be the root deno.json ("../deno.json")`);
    }
  }
  for (const name of Object.keys(blocks)) {
    if (!names.includes(name)) {
      problems.push(`${name}: config.toml has a block but supabase/functions/${name} is missing`);
    }
  }
  return problems;
}

/** The target of a bare specifier under the import map: an exact key, or the longest "prefix/" key. */
function mapBareSpecifier(specifier: string, imports: Record<string, string>): string | undefined {
  if (specifier in imports) return imports[specifier];
  const prefix = Object.keys(imports)
    .filter((key) => key.endsWith("/") && specifier.startsWith(key))
    .sort((a, b) => b.length - a.length)[0];
  return prefix === undefined ? undefined : imports[prefix] + specifier.slice(prefix.length);
}

function checkGraph(name: string, modules: ModuleInfo[], imports: Record<string, string>): string[] {
  const problems: string[] = [];
  const relative = (url: string) => url.startsWith(repoRoot.href) ? url.slice(repoRoot.href.length) : url;
  for (const module of modules) {
    if (module.error) problems.push(`${name}: ${relative(module.specifier)} does not resolve: ${module.error}`);
    // Files of npm packages are the bundler's business; only this repository's own modules are checked.
    if (module.kind !== "esm" || !module.specifier.startsWith(functionsDir.href)) continue;
    for (const dependency of module.dependencies ?? []) {
      const from = `${name}: ${relative(module.specifier)} imports "${dependency.specifier}"`;
      const { specifier } = dependency;
      if (specifier.startsWith("node:")) continue;
      if (specifier.startsWith("./") || specifier.startsWith("../")) {
        const resolved = dependency.code?.specifier ?? dependency.type?.specifier ?? "";
        if (!resolved.startsWith(functionsDir.href)) {
          problems.push(`${from}, outside supabase/functions/, which the deploy does not upload`);
        } else if (!/\.(ts|tsx|js|mjs|jsx)$/.test(resolved)) {
          // The CLI's upload follows only relative imports that carry a file extension.
          problems.push(`${from} without a file extension, which the deploy would not upload`);
        }
        continue;
      }
      const target = mapBareSpecifier(specifier, imports);
      if (target === undefined) {
        problems.push(`${from}, which the import map does not map (inline npm:, jsr: or URL imports are not allowed)`);
      } else if (!target.startsWith("npm:")) {
        problems.push(`${from}, mapped to "${target}" rather than an npm: package`);
      }
    }
  }
  return problems;
}

async function run(args: string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), { args, cwd: repoRoot, stdin: "null" }).output();
  const decoder = new TextDecoder();
  return { ok: output.success, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

async function checkFunction(name: string, imports: Record<string, string>, outDir: string): Promise<string[]> {
  const entrypoint = `supabase/functions/${name}/index.ts`;
  const problems: string[] = [];
  const check = await run(["check", "--quiet", entrypoint]);
  if (!check.ok) problems.push(`${name}: deno check failed:\n${check.stderr}`);
  const info = await run(["info", "--json", entrypoint]);
  if (!info.ok) {
    problems.push(`${name}: deno info failed:\n${info.stderr}`);
  } else {
    problems.push(...checkGraph(name, (JSON.parse(info.stdout) as { modules: ModuleInfo[] }).modules, imports));
  }
  const bundle = await run(["bundle", "--quiet", "--platform", "deno", "--output", `${outDir}/${name}.js`, entrypoint]);
  if (!bundle.ok) problems.push(`${name}: deno bundle failed:\n${bundle.stderr}`);
  return problems;
}

const names = await functionNames();
const config = parse(await Deno.readTextFile(new URL("config.toml", supabaseDir))) as {
  functions?: Record<string, FunctionBlock>;
};
const { imports } = JSON.parse(await Deno.readTextFile(rootImportMap)) as { imports: Record<string, string> };
const outDir = await Deno.makeTempDir({ prefix: "function-bundles-" });
try {
  const problems = [
    ...checkConfig(names, config.functions ?? {}),
    ...(await Promise.all(names.map((name) => checkFunction(name, imports, outDir)))).flat(),
  ];
  if (problems.length > 0) {
    console.error(problems.join("\n"));
    Deno.exitCode = 1;
  } else {
    console.log(
      `${names.length} functions check, resolve inside supabase/functions/ and bundle alone: ${names.join(", ")}`,
    );
  }
} finally {
  await Deno.remove(outDir, { recursive: true });
}
