/**
 * The embedded cluster every suite database of a run starts from, with the
 * schema applied: PGlite's initdb and the migrations take seconds, loading a
 * written cluster under one, and a run starts dozens of databases. It is
 * written once, by a stack started on an empty cluster (which migrates it, as
 * any stack would), and kept in `node_modules/.cache/` under a key made of
 * what it is built from: PGlite's version, the local bootstrap, the code that
 * writes it and every migration. A changed migration makes a new one; `npm ci` removes them all.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeCluster } from "./embedded-database.ts";
import { startStack } from "./stack.ts";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const cacheDir = join(repoRoot, "node_modules", ".cache", "notes-service");

function keyOfSchema(): string {
  const hash = createHash("sha256");
  hash.update(
    JSON.parse(readFileSync(join(repoRoot, "node_modules/@electric-sql/pglite/package.json"), "utf8")).version,
  );
  hash.update(readFileSync(join(repoRoot, "dev/bootstrap.sql")));
  // How a cluster is written (what it keeps of PGlite's initdb).
  hash.update(readFileSync(join(repoRoot, "dev/harness/embedded-database.ts")));
  const migrations = join(repoRoot, "supabase/migrations");
  for (const name of readdirSync(migrations).filter((name) => name.endsWith(".sql")).sort()) {
    hash.update(name);
    hash.update(readFileSync(join(migrations, name)));
  }
  return hash.digest("hex").slice(0, 16);
}

/** The file of the migrated cluster for the schema as it is now, written first if there is none yet. */
export async function migratedClusterFile(): Promise<string> {
  const name = `migrated-cluster-${keyOfSchema()}.tar`;
  const file = join(cacheDir, name);
  if (existsSync(file)) return file;
  mkdirSync(cacheDir, { recursive: true });
  // Written aside and renamed, so a run beside this one never reads half a cluster.
  const partial = `${file}.${process.pid}.partial`;
  try {
    await writeCluster(partial, async (url) => await (await startStack({ databaseUrl: url })).stop());
    renameSync(partial, file);
  } finally {
    rmSync(partial, { force: true });
  }
  for (
    const stale of readdirSync(cacheDir).filter((entry) => entry.startsWith("migrated-cluster-") && entry !== name)
  ) {
    rmSync(join(cacheDir, stale), { force: true });
  }
  return file;
}
