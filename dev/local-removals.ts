/**
 * The local stack's removal loop: runs the attachments' removal dispatcher
 * (the one `attachments-dispatch` runs on hosted Supabase every minute) every
 * two seconds, so abandoned uploads expire and removed files leave the disk,
 * and a removal the store did not confirm is retried. Each idle run is a
 * transaction on the stack's database, which on the embedded PGlite costs
 * tens of milliseconds of CPU: every second it was most of an idle stack's.
 */
import { dispatchRemovals } from "../supabase/functions/_shared/attachments/removals.ts";
import { getConfig } from "../supabase/functions/_shared/config/mod.ts";

/** Dispatches every `intervalMs`; returns a function that stops the loop. */
export function startLocalRemovals(intervalMs = 2_000): () => Promise<void> {
  const { store } = getConfig().attachments;
  let stopped = false;
  const loop = (async () => {
    while (!stopped && store) {
      try {
        await dispatchRemovals(store);
      } catch (error) {
        console.error(`[attachments] removals not dispatched: ${error instanceof Error ? error.message : error}`);
      }
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}
