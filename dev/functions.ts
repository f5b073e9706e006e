/**
 * The deployable functions: every folder of `supabase/functions/` whose name
 * does not start with `_` or `.` (the CLI treats `_shared`-style folders as
 * code, not functions). The local gateway, the deploy check and the bench all
 * list functions through here.
 *
 * @example
 * ```ts
 * for (const name of await functionNames()) console.log(name);
 * ```
 */

export const functionsDir = new URL("../supabase/functions/", import.meta.url);

/** The names of the functions in `dir`, sorted. */
export async function functionNames(dir = functionsDir): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isDirectory && !entry.name.startsWith("_") && !entry.name.startsWith(".")) names.push(entry.name);
  }
  return names.sort();
}
