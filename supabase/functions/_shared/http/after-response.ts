/**
 * Work that must not delay the answer: on Supabase's edge runtime it is
 * handed to `EdgeRuntime.waitUntil`, which keeps the isolate alive until it
 * is done; elsewhere (the local stack, self-hosted Deno) the process lives
 * on anyway and the work simply runs beside the answer. A failure is logged,
 * never thrown at a request that has already been answered.
 *
 * @example
 * ```ts
 * afterResponse("login failure record", () => withServiceTransaction(recordLoginFailure(...)));
 * ```
 */

interface EdgeRuntimeGlobal {
  EdgeRuntime?: { waitUntil(promise: Promise<unknown>): void };
}

/** The edge runtime's `waitUntil`, where the functions run on it. */
export function edgeRuntimeWaitUntil(): ((promise: Promise<unknown>) => void) | undefined {
  const edgeRuntime = (globalThis as EdgeRuntimeGlobal).EdgeRuntime;
  return edgeRuntime ? (promise) => edgeRuntime.waitUntil(promise) : undefined;
}

/** Starts `work` without waiting for it; `what` names it in the log line of a failure. */
export function afterResponse(what: string, work: () => Promise<unknown>): void {
  const running = work().catch((error) =>
    console.error(JSON.stringify({ level: "warn", event: `${what} failed`, error: String(error) }))
  );
  edgeRuntimeWaitUntil()?.(running);
}
