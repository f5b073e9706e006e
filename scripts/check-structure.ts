/**
 * Checks the house rules on the shape of the code, part of `npm run check`:
 * - no source file over 600 lines, outside the migrations, the tests and
 *   generated files (which are not source: `openapi.json`, `shared/dist/`);
 * - none in `supabase/functions/_shared/` over 350, so each module there keeps one job;
 * - nothing under `bench/` or `scripts/` imports from `tests/`: the tools run without the suite.
 *
 * @example
 * ```sh
 * deno run --allow-read scripts/check-structure.ts
 * ```
 */
import { readFile } from "node:fs/promises";
import { dirname, extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { repositoryFiles } from "./repository-files.ts";

/** A file that breaks one of the rules, and which. */
export interface StructureProblem {
  /** Relative to the checked root, with `/` separators. */
  file: string;
  problem: string;
}

/** What counts as source: code, styles, pages and SQL. */
const sourceExtensions = new Set([".ts", ".tsx", ".js", ".mjs", ".cjs", ".css", ".html", ".sql"]);

/** The most lines a source file may have, by the first folder prefix that holds it; `undefined`: no limit. */
const lineLimits: readonly [prefix: string, limit: number | undefined][] = [
  ["supabase/migrations/", undefined],
  ["tests/", undefined],
  ["supabase/functions/_shared/", 350],
  ["", 600],
];

/** The folders whose files must not import from `tests/`. */
const toolFolders = ["bench/", "scripts/"];

/** The line limit of `file` (relative to the root, with `/` separators), or undefined where there is none. */
export function lineLimitOf(file: string): number | undefined {
  for (const [prefix, limit] of lineLimits) if (file.startsWith(prefix)) return limit;
  return undefined;
}

/** The module specifiers of `source`: static imports and re-exports, side-effect imports and dynamic `import()`. */
export function importedSpecifiers(source: string): string[] {
  const specifiers: string[] = [];
  const patterns = [/\b(?:import|export)\b[^"';]*?\bfrom\s*["']([^"']+)["']/g, /\bimport\s*\(?\s*["']([^"']+)["']/g];
  for (const pattern of patterns) {
    for (const match of source.matchAll(pattern)) specifiers.push(match[1]);
  }
  return specifiers;
}

/** The lines of `text` as an editor numbers them: a last line without a newline counts too. */
function lineCount(text: string): number {
  if (text === "") return 0;
  const newlines = text.split("\n").length - 1;
  return text.endsWith("\n") ? newlines : newlines + 1;
}

/** Checks `files` (relative to `root`; by default every source file under it) and answers the rules they break. */
export async function checkStructure(root: string, files?: string[]): Promise<StructureProblem[]> {
  const problems: StructureProblem[] = [];
  const checked = files ?? await repositoryFiles(root, (name) => sourceExtensions.has(extname(name).toLowerCase()));
  for (const file of checked) {
    const text = await readFile(join(root, file), "utf8");
    const limit = lineLimitOf(file);
    const lines = lineCount(text);
    if (limit !== undefined && lines > limit) {
      problems.push({ file, problem: `has ${lines} lines; the most a file here may have is ${limit}: split it` });
    }
    if (!toolFolders.some((folder) => file.startsWith(folder))) continue;
    for (const specifier of importedSpecifiers(text)) {
      if (!specifier.startsWith(".")) continue;
      const target = normalize(join(dirname(file), specifier)).split("\\").join("/");
      if (target.startsWith("tests/")) {
        problems.push({ file, problem: `imports ${specifier} from tests/; move what it needs beside it` });
      }
    }
  }
  return problems;
}

if (import.meta.main) {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const problems = await checkStructure(root);
  for (const { file, problem } of problems) console.error(`${file} ${problem}`);
  if (problems.length > 0) {
    console.error(`\n${problems.length} problem(s) with the structure of the code.`);
    Deno.exit(1);
  }
  console.log("Every source file is within its size limit, and no tool imports from tests/.");
}
