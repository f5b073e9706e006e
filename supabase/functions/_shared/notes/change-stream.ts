/**
 * The events of one live update stream (`GET /notes-stream`): the caller's
 * changes after a point of their change sequence, as the changes feed reads
 * them, then each new one as it happens, until the stream's time is up.
 *
 * Every event's id is the feed's cursor just after it, so a client that
 * reconnects with `Last-Event-ID` resumes exactly where it stopped: each
 * change once, in feed order, none lost. A stream waits on the isolate's
 * change notices (`db/change-notices.ts`) and reads only when its owner's
 * sequence moved; every read is the feed's own query under the caller's
 * row-level security, behind the check that their session is still live. At
 * least every `STREAM_KEEPALIVE_SECONDS` it reads anyway, which ends the
 * stream of a session that has ended and catches a notice that was lost, and
 * sends a comment when it had nothing to send.
 *
 * @example
 * ```ts
 * const start = await startChangeStream(caller, after);
 * return eventStreamResponse(changeStreamBody(caller, start, endsAt), answerHeaders.notes);
 * ```
 */
import type { Caller } from "../auth/caller.ts";
import { limits } from "../contract/common.ts";
import type { StreamReady, StreamReset } from "../contract/notes.ts";
import { getConfig } from "../config/mod.ts";
import { watchChanges } from "../db/change-notices.ts";
import { CursorExpiredError, HttpError, ServiceUnavailableError } from "../http/errors.ts";
import { reconnectAfter, serverComment, serverEvent } from "../http/event-stream.ts";
import { withDatabaseDeadline } from "../http/request-deadline.ts";
import { edgeRuntimeWaitUntil } from "../http/after-response.ts";
import { type AnswerBody, answerBudgetFullMessage, answerBudgetHasRoom, budgetedBody } from "../http/answer-budget.ts";
import { encodeChangesCursor } from "./changes-cursor.ts";
import { type ChangesPageRead, readChangesEnd, readChangesPage } from "./changes-page.ts";

/**
 * Changes read per round trip while catching up: a tenth of the feed's largest page, so a batch of the largest
 * notes (3 MB at most) is what one stream holds while it waits for its client. With whole pages, 150 streams that
 * never read held 380 MB past the stack's idle memory (tests/load/slow-readers.load.ts bounds it at 300 MB).
 */
const batchSize = limits.changesLimitMax / 10;
/** The most a batch can take in UTF-8: each character of a note's title and content is 3 bytes at most. */
const largestBatchBytes = batchSize * 3 * (limits.titleMaxChars + limits.contentMaxChars);
/** The reconnect delay a planned end asks for: soon, since nothing is lost meanwhile. */
const plannedEndRetryMs = 1_000;
/** The reconnect delay after a read failed (the database unreachable): time for it to come back. */
const failedReadRetryMs = 5_000;
/** The reconnect delay when the isolate holds too many unsent answers: time for their clients to take them. */
const busyRetryMs = 5_000;

const encoder = new TextEncoder();

/** Where a stream starts: its first read, made before the answer so that a refusal is an ordinary 4xx. */
export type StreamStart =
  | { kind: "page"; page: ChangesPageRead }
  | { kind: "end"; reached: number }
  | { kind: "reset" };

/**
 * The first read of a stream from change number `after`, or from the feed's
 * end without one. Throws what the feed throws (401, 403, 503); a cursor the
 * feed no longer covers is a start that says so, answered as a `reset` event.
 */
export async function startChangeStream(caller: Caller, after: number | undefined): Promise<StreamStart> {
  if (after === undefined) return { kind: "end", reached: await readChangesEnd(caller) };
  // Refused before the read rather than after it: a batch read only to be refused would cost as much memory.
  if (!answerBudgetHasRoom(largestBatchBytes)) throw busy();
  try {
    return { kind: "page", page: await readChangesPage(caller, after, batchSize) };
  } catch (error) {
    if (error instanceof CursorExpiredError) return { kind: "reset" };
    throw error;
  }
}

/** 503 for a stream that cannot start now: the isolate holds as many unsent answers as it may. */
function busy(): ServiceUnavailableError {
  return new ServiceUnavailableError({
    message: answerBudgetFullMessage,
    retryAfter: busyRetryMs / 1_000,
  });
}

/** Streams end early when the isolate is about to stop; each registers how to end itself here. */
const openStreams = new Set<() => void>();

/** Ends every open stream with its reconnect hint: the isolate or the local stack is shutting down. */
export function endChangeStreams(): void {
  for (const end of openStreams) end();
}

// The edge runtime dispatches `beforeunload` shortly before it stops a worker (its wall clock or memory limit
// reached), which would cut a stream mid-event: each ends cleanly instead, and its client resumes elsewhere.
globalThis.addEventListener?.("beforeunload", endChangeStreams);

/**
 * The stream's body: the events after `start`, live until `endsAt`
 * (`performance.now()` time), when the client goes away, or when its
 * caller's session ends. Reads wait for the consumer, so a client that does
 * not read holds one batch at most, and that batch draws on the isolate's
 * answer budget until the client has taken it.
 */
export function changeStreamBody(caller: Caller, start: StreamStart, endsAt: number): ReadableStream<Uint8Array> {
  const stop = new AbortController();
  const pieces = budgetedPieces(changeEvents(caller, start, endsAt, stop.signal));
  const finished = Promise.withResolvers<void>();
  // A stream that is open keeps its worker from being reclaimed as idle; it never outlives the wall clock.
  edgeRuntimeWaitUntil()?.(finished.promise);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await pieces.next();
      // Cancelled while this read was under way: the stream is closed already.
      if (stop.signal.aborted) return;
      if (next.done) {
        controller.close();
        finished.resolve();
      } else {
        controller.enqueue(next.value);
      }
    },
    async cancel() {
      stop.abort();
      await pieces.return(undefined);
      finished.resolve();
    },
  }, { highWaterMark: 0 });
}

/**
 * The stream's texts as pieces of its body, each held against the isolate's
 * answer budget (`http/answer-budget.ts`) until the client has taken it, as the
 * notes' other large answers are: a batch of catch-up can be 12 MB, which
 * clients that open streams and never read would otherwise each hold. When the
 * budget has no room, the stream ends with a reconnect hint, and the client
 * resumes from the last event it took.
 */
async function* budgetedPieces(texts: AsyncGenerator<string>): AsyncGenerator<Uint8Array> {
  for await (const text of texts) {
    const answer = budgetedBody(text);
    if (!answer) {
      yield encoder.encode(reconnectAfter(busyRetryMs));
      return;
    }
    yield* piecesOf(answer.body);
  }
}

/** The pieces of a budgeted body; one left unread gives back its share of the budget. */
async function* piecesOf(body: AnswerBody["body"]): AsyncGenerator<Uint8Array> {
  if (typeof body === "string") return yield encoder.encode(body);
  if (body instanceof Uint8Array) return yield body;
  const reader = (body as ReadableStream<Uint8Array>).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel();
  }
}

/** The stream's messages as text: each batch of changes (with `ready` once caught up), comments, the last word. */
async function* changeEvents(
  caller: Caller,
  start: StreamStart,
  endsAt: number,
  cancelled: AbortSignal,
): AsyncGenerator<string> {
  if (start.kind === "reset") {
    yield resetEvent();
    return;
  }
  const { keepAliveSeconds } = getConfig().streams;
  const owner = caller.sub;
  const waker = new Waker();
  let position = start.kind === "page" ? start.page.reached : start.reached;
  const stopWatching = watchChanges(owner, (lastChange) => {
    if (lastChange === undefined || lastChange > position) waker.wake();
  });
  const ended = new AbortController();
  const end = () => ended.abort();
  openStreams.add(end);
  const endTimer = setTimeout(end, Math.max(0, endsAt - performance.now()));
  cancelled.addEventListener("abort", end);
  try {
    let page = start.kind === "page" ? start.page : undefined;
    let ready = false;
    for (;;) {
      let batch = "";
      for (const { change, entry } of page?.changes ?? []) {
        batch += serverEvent({ event: "change", id: encodeChangesCursor(owner, change), data: entry });
      }
      position = page?.reached ?? position;
      if (!ready && !page?.hasMore) {
        ready = true;
        const cursor = encodeChangesCursor(owner, position);
        batch += serverEvent({ event: "ready", id: cursor, data: { cursor } satisfies StreamReady });
      }
      if (batch) yield batch;
      if (ended.signal.aborted) break;
      if (!page?.hasMore) {
        const woken = await waker.wait(keepAliveSeconds * 1_000, ended.signal);
        if (ended.signal.aborted) break;
        if (!woken) yield serverComment("keep-alive");
      }
      if (!answerBudgetHasRoom(largestBatchBytes)) {
        yield reconnectAfter(busyRetryMs);
        return;
      }
      try {
        // A deadline of its own: this read is no part of the request that opened the stream.
        page = await withDatabaseDeadline(() => readChangesPage(caller, position, batchSize));
      } catch (error) {
        yield* endAfterFailedRead(error);
        return;
      }
    }
    if (!cancelled.aborted) yield reconnectAfter(plannedEndRetryMs);
  } finally {
    clearTimeout(endTimer);
    openStreams.delete(end);
    stopWatching();
  }
}

/**
 * A read that failed ends the stream. A caller that may no longer read (a
 * session ended, an account suspended) finds out on reconnecting, from its
 * 401 or 403; anything else (the database unreachable) is worth a retry later.
 */
function* endAfterFailedRead(error: unknown): Generator<string> {
  // The sequence no longer reaches back to the stream's position: the database was restored from a backup.
  if (error instanceof CursorExpiredError) return yield resetEvent();
  if (error instanceof HttpError && error.code !== "service_unavailable") return;
  if (!(error instanceof HttpError)) {
    console.error(JSON.stringify({ level: "error", event: "change stream read failed", error: String(error) }));
  }
  yield reconnectAfter(failedReadRetryMs);
}

/** The event that tells the client its cursor is no longer covered; the stream ends after it. */
function resetEvent(): string {
  const reset: StreamReset = {
    code: "cursor_expired",
    message: "The cursor is older than the deletions kept; sync again from /notes-changes without since",
  };
  return serverEvent({ event: "reset", data: reset });
}

/** A flag that notices raise and a stream waits on, so notices that come while it reads are not lost. */
class Waker {
  #raised = false;
  #waiting: (() => void) | undefined;

  wake(): void {
    this.#raised = true;
    this.#waiting?.();
  }

  /** True when woken (now or already), false after `ms` or when `signal` aborts; lowers the flag. */
  async wait(ms: number, signal: AbortSignal): Promise<boolean> {
    if (!this.#raised && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          signal.removeEventListener("abort", done);
          resolve();
        }
        this.#waiting = done;
        signal.addEventListener("abort", done);
      });
      this.#waiting = undefined;
    }
    const woken = this.#raised;
    this.#raised = false;
    return woken;
  }
}
