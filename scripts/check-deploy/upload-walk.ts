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

/**
 * The CLI's pattern, `(?i)(?:import|export)\s+(?:type\s+)?(?:{[^{}]+}|.*?)\s*(?:from)?\s*['"](.*?)['"]|import\(\s*['"](.*?)['"]\)`,
 * with Go's meaning of `\s` (ASCII space, tab, line feed, form feed, carriage return) and `.` (anything but a line
 * feed) written out, as JavaScript's `\s` and `.` would match other characters.
 */
const space = "[\\t\\n\\f\\r ]";
const importPathPattern = new RegExp(
  `(?:import|export)${space}+(?:type${space}+)?(?:{[^{}]+}|[^\\n]*?)${space}*(?:from)?${space}*['"]([^\\n]*?)['"]` +
    `|import\\(${space}*['"]([^\\n]*?)['"]\\)`,
  "gi",
);

/** The specifiers the CLI's upload walk finds in `source`, trimmed as it trims them. */
export function uploadWalkSpecifiers(source: string): string[] {
  return Array.from(source.matchAll(importPathPattern), (match) => (match[1] || match[2] || "").trim());
}
