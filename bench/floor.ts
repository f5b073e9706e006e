/**
 * Starts the floor the bench compares the functions with (`bench/baseline/server.ts`), with the environment and the
 * Deno flags the stack runs with, so the two differ only in the code they run.
 *
 * @example
 * ```ts
 * const floor = await startFloor(env);
 * console.log(floor.boundedUrl, floor.bareUrl);
 * await floor.stop();
 * ```
 */
import { startDeno } from "../dev/processes.ts";
import { stackDenoFlags } from "../dev/stack-command.ts";

export interface RunningFloor {
  /** Its functions base URL (`.../functions/v1`) on the stack's bounded server. */
  boundedUrl: string;
  /** The same on a bare `Deno.serve`. */
  bareUrl: string;
  /** Its process, to read its CPU time. */
  pid: number;
  stop(): Promise<void>;
}

/** Starts the floor with `env` and waits until both of its servers listen. */
export async function startFloor(env: Record<string, string>): Promise<RunningFloor> {
  const child = await startDeno(
    new URL("./baseline/server.ts", import.meta.url).pathname,
    env,
    /Ready on (\S+) and on Deno\.serve at (\S+)/,
    { flags: stackDenoFlags },
  );
  const [, boundedUrl, bareUrl] = child.ready;
  return { boundedUrl, bareUrl, pid: child.pid, stop: child.stop };
}
