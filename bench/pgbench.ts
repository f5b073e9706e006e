/**
 * Runs pgbench against a database named by URL, and reads its tps: what the
 * bare-insert bench and the function path's floor both drive Postgres with.
 *
 * @example
 * ```ts
 * const tps = tpsOf(await runPgbench(new URL(databaseUrl), file, ["-c", "2", "-T", "2"], { cwd: Deno.cwd() }));
 * ```
 */
import { runCommand } from "../dev/processes.ts";

/** pgbench's output for `scriptFile` with `args` on `database` (no vacuum first); throws when pgbench fails. */
export async function runPgbench(
  database: URL,
  scriptFile: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<string> {
  const result = await runCommand("pgbench", [
    "-n",
    "-h",
    database.hostname,
    "-p",
    database.port || "5432",
    "-U",
    decodeURIComponent(database.username) || "postgres",
    "-f",
    scriptFile,
    ...args,
    database.pathname.slice(1),
  ], options);
  if (!result.ok) throw new Error(`pgbench failed: ${result.stderr}`);
  return result.stdout;
}

/** The transactions per second a pgbench run printed. */
export function tpsOf(output: string): number {
  const match = /tps = ([\d.]+) \(without initial connection time\)/.exec(output);
  if (!match) throw new Error(`pgbench printed no tps: ${output}`);
  return Number(match[1]);
}
