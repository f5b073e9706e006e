/**
 * The live update streams open in this isolate, by owner: at most
 * `STREAM_MAX_PER_USER` at once for one account, so one client cannot take
 * every connection the server accepts, nor make one write wake thousands of
 * reads that every other user's requests wait behind. And how to end them all
 * at once, when the isolate or the local stack is about to stop.
 *
 * @example
 * ```ts
 * const release = claimStreamSlot(caller.sub, () => stream.end());
 * if (!release) throw new TooManyRequestsError("...", 15);
 * // ... once the stream is over
 * release();
 * ```
 */
import { getConfig } from "../config/mod.ts";

/** How to end each open stream, by owner. */
const openByOwner = new Map<string, Set<() => void>>();

/**
 * A slot for one more stream of `owner`, whose `end` ends it early; undefined
 * when the owner already has `STREAM_MAX_PER_USER` open. The returned function
 * gives the slot back; calling it again does nothing.
 */
export function claimStreamSlot(owner: string, end: () => void): (() => void) | undefined {
  const open = openByOwner.get(owner) ?? new Set();
  if (open.size >= getConfig().streams.maxPerUser) return undefined;
  open.add(end);
  openByOwner.set(owner, open);
  return () => {
    if (open.delete(end) && open.size === 0) openByOwner.delete(owner);
  };
}

/** Ends every open stream, each with its reconnect hint: the isolate or the local stack is about to stop. */
export function endChangeStreams(): void {
  for (const open of openByOwner.values()) for (const end of open) end();
}

// The edge runtime dispatches `beforeunload` shortly before it stops a worker (its wall clock or memory limit
// reached), which would cut a stream mid-event: each ends cleanly instead, and its client resumes elsewhere.
globalThis.addEventListener?.("beforeunload", endChangeStreams);
