/**
 * Where a load's CPU time goes on this machine: the user and system time of processes (all their threads) from
 * /proc, sampled inside a timed run so that what a run costs per request can be told apart from what other work on
 * the machine slows it by. The database's server processes are found by the database's name in
 * `pg_stat_activity`, so other databases' backends on the same server are left out.
 *
 * @example
 * ```ts
 * const cpu = await cpuPerOperation(run, { seconds: 10, pids: async () => [stackPid, ...await backends(sql, db)] });
 * ```
 */
import type postgres from "postgres";

/** Milliseconds of CPU time of `pid` so far, or undefined when it is gone or not on this machine. */
async function cpuMillisOf(pid: number): Promise<number | undefined> {
  try {
    // Fields 14 and 15 of /proc/<pid>/stat, utime and stime, in clock ticks (100 a second on Linux).
    const fields = (await Deno.readTextFile(`/proc/${pid}/stat`)).split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/** The processes of this machine whose command is `name` (as `/proc/<pid>/comm` has it). */
export async function pidsNamed(name: string): Promise<number[]> {
  const pids: number[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const comm = await Deno.readTextFile(`/proc/${entry.name}/comm`).catch(() => "");
    if (comm.trim() === name) pids.push(Number(entry.name));
  }
  return pids;
}

/** The server processes of the database's other sessions (not the caller's own). */
export async function backendPids(sql: postgres.Sql, database: string): Promise<number[]> {
  const rows = await sql<{ pid: number }[]>`
    select pid from pg_stat_activity where datname = ${database} and pid <> pg_backend_pid()`;
  return rows.map((row) => row.pid);
}

/**
 * CPU milliseconds that each group of processes spent in the middle of a run of `seconds` (from one second in to
 * one second before its end, so processes that start or end with the run are counted while they work), per second.
 * A process in both samples counts; one that started or ended between them does not.
 */
export async function cpuPerSecondDuring<T>(
  run: Promise<T>,
  seconds: number,
  groups: Record<string, () => Promise<number[]>>,
): Promise<{ result: T; cpuPerSecond: Record<string, number> }> {
  const sample = async () => {
    const taken: Record<string, Map<number, number>> = {};
    for (const [name, pids] of Object.entries(groups)) {
      taken[name] = new Map();
      for (const pid of await pids()) {
        const millis = await cpuMillisOf(pid);
        if (millis !== undefined) taken[name].set(pid, millis);
      }
    }
    return { at: performance.now(), taken };
  };
  const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  await wait(1000);
  const first = await sample();
  await wait(Math.max(1000, (seconds - 2) * 1000));
  const last = await sample();
  const elapsedSeconds = (last.at - first.at) / 1000;
  const cpuPerSecond: Record<string, number> = {};
  for (const name of Object.keys(groups)) {
    let spent = 0;
    for (const [pid, millis] of last.taken[name]) {
      const before = first.taken[name].get(pid);
      if (before !== undefined) spent += millis - before;
    }
    cpuPerSecond[name] = spent / elapsedSeconds;
  }
  return { result: await run, cpuPerSecond };
}
