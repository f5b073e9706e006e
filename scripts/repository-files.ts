/**
 * The repository's own files, for the checks that read them all (links, structure): every file under a root
 * whose name passes a filter, skipping dependencies, build output, test output and dot-folders.
 *
 * @example
 * ```ts
 * const markdown = await repositoryFiles(root, (name) => name.endsWith(".md"));
 * ```
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";

/** Folders never searched: dependencies, build output, local data, dot-folders. */
const skippedFolders = new Set(["node_modules", "dist", "test-results"]);

/** The files under `root` whose name `keep` accepts, relative to it with `/` separators, in a stable order. */
export async function repositoryFiles(root: string, keep: (name: string) => boolean): Promise<string[]> {
  const found: string[] = [];
  const walk = async (folder: string) => {
    const entries = await readdir(join(root, folder), { withFileTypes: true });
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const path = folder === "" ? entry.name : `${folder}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!entry.name.startsWith(".") && !skippedFolders.has(entry.name)) await walk(path);
      } else if (entry.isFile() && keep(entry.name)) {
        found.push(path);
      }
    }
  };
  await walk("");
  return found;
}
