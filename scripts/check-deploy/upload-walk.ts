/**
 * What the Supabase CLI reads from a source file to find the files `supabase functions deploy` uploads: it matches
 * the text, it does not parse it (supabase/cli `apps/cli-go/pkg/function/deno.go`, `importPathPattern` and
 * `WalkImportPaths`). An import written in a shape the pattern misses type-checks and runs here, and is missing
 * from the deployed function; `npm run check:deploy` names every such import.
 *
 * @example
 * ```ts
 * uploadWalkSpecifiers(`const m = await import("../x.ts");`); // ["../x.ts"]
 * ```
 */

/** The CLI's pattern, as written in Go (RE2 and JavaScript agree on it): a static import or export, or `import("…")`. */
const importPathPattern =
  /(?:import|export)\s+(?:type\s+)?(?:{[^{}]+}|.*?)\s*(?:from)?\s*['"](.*?)['"]|import\(\s*['"](.*?)['"]\)/gi;

/** The specifiers the CLI's upload walk finds in `source`, trimmed as it trims them. */
export function uploadWalkSpecifiers(source: string): string[] {
  return Array.from(source.matchAll(importPathPattern), (match) => (match[1] || match[2] || "").trim());
}
