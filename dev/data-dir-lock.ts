/**
 * One process at a time in an embedded database's folder: the stack
 * (`npm start`) or `npm run admin`. PGlite does not guard its folder (the
 * postmaster.pid it writes always names pid -42), and a second process that
 * opened it would run migrations or writes beside the first one's and corrupt
 * it. So each takes `stack.lock` in the folder, holding its pid, before it
 * opens the database, and removes it when it exits. A lock whose process is
 * no longer running (a crash, a `kill -9`) is taken over.
 *
 * @example
 * ```ts
 * const lock = await lockDataDir(".data/pglite"); // throws DataDirInUse while another process holds it
 * ```
 */
import process from "node:process";

/** The lock's file in the data folder; it holds its holder's pid. */
export const lockFileName = "stack.lock";

/** How long to wait before looking again while another process takes over a stale lock. */
const takeoverPollMs = 20;

/** The folder is held by another process that is running. */
export class DataDirInUse extends Error {
  constructor(readonly dataDir: string, readonly holder: number) {
    super(`${dataDir} is in use by another process (pid ${holder})`);
  }
}

export interface DataDirLock {
  /** Removes the lock; done on exit (`Deno.exit` too) if not before. */
  release(): void;
}

/**
 * Takes the lock of `dataDir` (created if need be, so a first start holds it
 * before the database writes a file), or throws DataDirInUse naming the
 * holder. Taking over a stale lock is said in one line on stderr.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  Deno.mkdirSync(dataDir, { recursive: true });
  const lock = `${dataDir}/${lockFileName}`;
  // Written whole under a name of this process's own, then linked into place: the lock appears at
  // once with its pid in it (never empty to a reader), and the link fails if a lock is there already.
  const mine = `${lock}.${Deno.pid}`;
  Deno.writeTextFileSync(mine, `${Deno.pid}\n`);
  try {
    let removedFrom: number | undefined;
    for (;;) {
      if (linked(mine, lock)) {
        if (removedFrom !== undefined) {
          console.warn(`Took over ${dataDir}: pid ${removedFrom}, which held it, is no longer running`);
        }
        return held(lock);
      }
      const holder = readPid(lock);
      // Released between the link and the read: try again.
      if (holder === undefined) continue;
      if (isRunning(holder)) throw new DataDirInUse(dataDir, holder);
      if (await removeStale(dataDir, lock, holder, mine)) removedFrom = holder;
    }
  } finally {
    Deno.removeSync(mine);
  }
}

function held(lock: string): DataDirLock {
  // Only this process's own lock is removed, should it have been taken over after all.
  const release = () => {
    if (readPid(lock) === Deno.pid) Deno.removeSync(lock);
  };
  globalThis.addEventListener("unload", release);
  return {
    release() {
      globalThis.removeEventListener("unload", release);
      release();
    },
  };
}

/**
 * Removes `lock`, which `holder` (no longer running) left, unless another
 * starting process is doing so; answers whether this one did. Two processes
 * that both found it stale must not both remove it: the later one would remove
 * the lock the earlier one had just taken, and both would run. So only the one
 * that creates the takeover file removes it, and only if it is still `holder`'s.
 */
async function removeStale(dataDir: string, lock: string, holder: number, mine: string): Promise<boolean> {
  const takeover = `${lock}.takeover`;
  if (!linked(mine, takeover)) {
    const taker = readPid(takeover);
    // The takeover lasts a few system calls: one left behind means its process died inside them.
    if (taker !== undefined && !isRunning(taker)) {
      throw new Error(`pid ${taker} stopped while it took over ${dataDir}; remove ${takeover}`);
    }
    await new Promise((resolve) => setTimeout(resolve, takeoverPollMs));
    return false;
  }
  try {
    if (readPid(lock) !== holder) return false;
    Deno.removeSync(lock);
    return true;
  } finally {
    Deno.removeSync(takeover);
  }
}

/** Links `from` as `to`; false if `to` exists. */
function linked(from: string, to: string): boolean {
  try {
    Deno.linkSync(from, to);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) return false;
    throw error;
  }
}

/** The pid in a lock file (0 if it holds none), or undefined if there is no such file. */
function readPid(file: string): number | undefined {
  try {
    const pid = Number(Deno.readTextFileSync(file).trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : 0;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

/**
 * Whether another process with `pid` is running. This process's own pid in a
 * lock it has not taken is a previous process's: a container restarts with the same pids.
 */
function isRunning(pid: number): boolean {
  if (pid === 0 || pid === Deno.pid) return false;
  try {
    // Signal 0 is sent to no one: it only asks whether the process exists.
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as { code?: string }).code === "EPERM";
  }
}
