/**
 * bcrypt on a thread of its own: where the runtime has Web Workers (Deno, so
 * the local stack and self-hosted servers), `passwords.ts` runs each hash
 * here, so an isolate hashes on as many cores as it has workers and its own
 * thread stays free for other requests. Each message is one job; the answer
 * carries its id.
 *
 * @example
 * ```ts
 * worker.postMessage({ id: 1, job: { kind: "compare", password, hash } });
 * ```
 */
import bcrypt from "bcryptjs";

/** One hashing job, as `passwords.ts` sends it. */
export type HashJob =
  | { kind: "hash"; password: string; salt: string }
  | { kind: "compare"; password: string; hash: string };

/** Does one job, on whichever thread calls it. */
export function runHashJob(job: HashJob): Promise<string | boolean> {
  return job.kind === "hash" ? bcrypt.hash(job.password, job.salt) : bcrypt.compare(job.password, job.hash);
}

interface WorkerScope {
  onmessage: ((event: MessageEvent<{ id: number; job: HashJob }>) => void) | null;
  postMessage(message: { id: number; result?: string | boolean; error?: string }): void;
}

// Only when loaded as a worker's entry point; imported as a module, it only exports runHashJob.
if (typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !== "undefined") {
  const scope = globalThis as unknown as WorkerScope;
  scope.onmessage = async ({ data: { id, job } }) => {
    try {
      scope.postMessage({ id, result: await runHashJob(job) });
    } catch (error) {
      scope.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
    }
  };
}
