/**
 * Reading a `text/event-stream` body (server-sent events, WHATWG HTML §9.2)
 * one event at a time, and timing the reconnections of a watch. Parsing is
 * eventsource-parser's, which follows the standard line by line; this module
 * only turns its callbacks into a sequence a consumer can await, so a slow
 * consumer holds back the reading instead of a queue growing behind it.
 *
 * @example
 * ```ts
 * for await (const field of eventStreamFields(response.body, 45_000)) {
 *   if (field.kind === "event") console.log(field.message.event, field.message.id, field.message.data);
 * }
 * ```
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { CallDeadline } from "./deadline.ts";

/** What a stream tells its reader: an event, or (`retry:`) how long to wait before reconnecting, in ms. */
export type EventStreamField = { kind: "event"; message: EventSourceMessage } | { kind: "retry"; ms: number };

/**
 * Each event and `retry` of `body`, in order, until the body ends. A body
 * silent for `silenceMs` (no event, no comment) throws the deadline's
 * `timeout`: a connection that died without a word looks like that. Stopping
 * early cancels the body.
 */
export async function* eventStreamFields(
  body: ReadableStream<Uint8Array>,
  silenceMs: number,
): AsyncGenerator<EventStreamField, void, undefined> {
  const fields: EventStreamField[] = [];
  const parser = createParser({
    onEvent: (message) => fields.push({ kind: "event", message }),
    onRetry: (ms) => fields.push({ kind: "retry", ms }),
  });
  const reader = body.getReader();
  // One decoder for the whole body: a character split between two chunks is decoded once both have come.
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await new CallDeadline(silenceMs).race(reader.read());
      if (done) return;
      parser.feed(decoder.decode(value, { stream: true }));
      yield* fields.splice(0);
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** The first wait after a failure, and the longest: 0.5 s doubling to 30 s. */
const firstBackoffMs = 500;
const longestBackoffMs = 30_000;

/**
 * How long to wait before reconnecting after `failures` failed attempts in a
 * row: 0.5 s doubling to 30 s, each a random share between half and all of
 * it, so clients that lost the same server do not all come back at once.
 */
export function backoffMs(failures: number): number {
  const ceiling = Math.min(longestBackoffMs, firstBackoffMs * 2 ** failures);
  return ceiling / 2 + Math.random() * ceiling / 2;
}

/** Waits `ms`, or until `signal` aborts if that comes first. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    if (signal?.aborted) done();
    else signal?.addEventListener("abort", done, { once: true });
  });
}
