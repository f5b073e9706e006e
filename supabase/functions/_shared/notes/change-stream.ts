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
 * return eventStreamResponse(await openChangeStream(caller, after, endsAt), answerHeaders.notes);
 * ```
 */
import type { Caller } from "../auth/caller.ts";
import { limits } from "../contract/common.ts";
import type { StreamReady, StreamReset } from "../contract/notes.ts";
import { getConfig } from "../config/mod.ts";
import { watchChanges } from "../db/change-notices.ts";
import { CursorExpiredError, HttpError, TooManyRequestsError } from "../http/errors.ts";
import { reconnectAfter, serverComment, serverEvent } from "../http/event-stream.ts";
import { withDatabaseDeadline } from "../http/request-deadline.ts";
import { edgeRuntimeWaitUntil } from "../http/after-response.ts";
import { type AnswerBody, answerBudgetBytes, answerBudgetRoom, budgetedBody } from "../http/answer-budget.ts";
import { encodeChangesCursor } from "./changes-cursor.ts";
import { claimStreamSlot } from "./open-streams.ts";
import { type ChangesPageRead, readChangesEnd, readChangesPage } from "./changes-page.ts";

/**
 * Changes read per round trip while catching up: a tenth of the feed's largest page, so a batch of the largest
 * notes (3 MB at most) is what one stream holds while it waits for its client. With whole pages, 150 streams that
 * never read held 380 MB past the stack's idle memory (tests/load/slow-readers.load.ts bounds it at 300 MB).
 */
const batchSize = limits.changesLimitMax / 10;
/**
 * The most one change's event can take: a character of a title or content is at most 6 bytes of JSON (a control
 * character is written `\u00XX`; any other takes 3 bytes of UTF-8 at most), plus the event's other fields.
 */
const largestChangeBytes = 6 * (limits.titleMaxChars + limits.contentMaxChars) + 1_024;
/**
 * The share of the isolate's answer budget that one account's streams may hold at once: a quarter, so one
 * account that opens streams and never reads them cannot take the room other accounts' large batches need.
 */
const ownerShareBytes = answerBudgetBytes / 4;
/** Budget held by each account's streams: batches sent to clients that have not taken them yet. */
const heldByOwner = new Map<string, number>();
/** What each account's streams are reading now, counted at the largest a change can be. */
const readingByOwner = new Map<string, number>();
/** The reconnect delay a planned end asks for: soon, since nothing is lost meanwhile. */
const plannedEndRetryMs = 1_000;
/** The reconnect delay after a read failed (the database unreachable): time for it to come back. */
const failedReadRetryMs = 5_000;
/** The reconnect delay when the isolate holds too many unsent answers: time for their clients to take them. */
const busyRetryMs = 5_000;
/** How long a stream whose time is up may take to send what it has left before it is closed anyway. */
const endGraceMs = 5_000;
/** How long an account over its streams waits before trying again: time for one of its streams to end. */
const tooManyStreamsRetrySeconds = 15;

const encoder = new TextEncoder();

/**
 * Opens a stream of the caller's changes after change number `after` (from
 * the feed's end without one), live until `endsAt` (`performance.now()`
 * time), when the client goes away, or when the caller's session ends. The
 * first read is made here, before the answer, so what refuses the caller
 * (401, 403, 429 for an account with `STREAM_MAX_PER_USER` streams open, 503)
 * is an ordinary error answer; a cursor the feed no longer covers is a stream
 * of one `reset` event.
 */
export async function openChangeStream(
  caller: Caller,
  after: number | undefined,
  endsAt: number,
): Promise<ReadableStream<Uint8Array>> {
  const stream = new LiveStream(caller, endsAt);
  try {
    return stream.body(await stream.firstBatch(after));
  } catch (error) {
    stream.close();
    throw error;
  }
}

/**
 * One open stream: its slot among its owner's streams, the notices it waits
 * on (watched from before its first read, so a change committed meanwhile
 * wakes it), where it stands, and when it ends.
 */
class LiveStream {
  readonly #caller: Caller;
  readonly #waker = new Waker();
  readonly #ended = new AbortController();
  readonly #release: () => void;
  readonly #stopWatching: () => void;
  readonly #endTimer: ReturnType<typeof setTimeout>;
  /** The change number the client has everything up to; until the first read, below every change. */
  #position = -1;
  /** Whether the stream has sent `ready`: it has caught up once. */
  #ready = false;
  /** Whether the stream has nothing more to send: its last word went out (`reset`, a retry hint), or it closed. */
  #over = false;
  /** Closes the body at once, whatever it waits for; set once the body exists. */
  #forceEnd: (() => void) | undefined;
  #forceTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(caller: Caller, endsAt: number) {
    this.#caller = caller;
    const release = claimStreamSlot(caller.sub, () => this.#end());
    if (!release) {
      throw new TooManyRequestsError(
        "Too many live update streams are open for this account; close one, or try again later",
        tooManyStreamsRetrySeconds,
      );
    }
    this.#release = release;
    try {
      this.#stopWatching = watchChanges(caller.sub, (lastChange) => {
        if (lastChange === undefined || lastChange > this.#position) this.#waker.wake();
      });
    } catch (error) {
      // A notice source that cannot start (a malformed DATABASE_LISTEN_URL) is a 500, and the slot is not kept.
      release();
      throw error;
    }
    this.#endTimer = setTimeout(() => this.#end(), Math.max(0, endsAt - performance.now()));
  }

  /**
   * Ends the stream when its time is up: it sends its reconnect hint next, and
   * if its client has not taken what it was sent by `endGraceMs` later, it is
   * closed anyway, so a client that does not read holds nothing past its time.
   */
  #end(): void {
    if (this.#ended.signal.aborted) return;
    this.#ended.abort();
    this.#forceTimer = setTimeout(() => this.#forceEnd?.(), endGraceMs);
  }

  /** Lets go of the slot, the notices and the timer; the stream sends nothing more. */
  close(): void {
    this.#over = true;
    this.#ended.abort();
    clearTimeout(this.#endTimer);
    clearTimeout(this.#forceTimer);
    this.#stopWatching();
    this.#release();
  }

  /** The text of the first batch: the changes after `after` (or none, from the end), `ready` once caught up. */
  async firstBatch(after: number | undefined): Promise<string> {
    if (after === undefined) {
      this.#position = await readChangesEnd(this.#caller);
      return this.#batchText(undefined);
    }
    const batch = reserveBatch(this.#caller.sub);
    // The account's unread batches fill its share: read nothing, and let the client come back once they are let go.
    if (batch.limit === 0) {
      this.#over = true;
      return reconnectAfter(busyRetryMs);
    }
    try {
      return this.#batchText(await readChangesPage(this.#caller, after, batch.limit));
    } catch (error) {
      if (!(error instanceof CursorExpiredError)) throw error;
      this.#over = true;
      return resetEvent();
    } finally {
      batch.release();
    }
  }

  /**
   * The stream's body, starting with `first`. Its pieces are pulled one at a
   * time, so a client that does not read holds one batch at most, and each
   * batch is held against the isolate's answer budget until the client has
   * taken it.
   */
  body(first: string): ReadableStream<Uint8Array> {
    const pieces = budgetedPieces(this.#caller.sub, first, this.#following());
    // Started now, not at the first pull, so the first batch is held against the budget from the moment it is read.
    let firstPiece: Promise<IteratorResult<Uint8Array>> | undefined = pieces.next();
    const finished = Promise.withResolvers<void>();
    // A stream that is open keeps its worker from being reclaimed as idle; it never outlives the wall clock.
    edgeRuntimeWaitUntil()?.(finished.promise);
    const cancelled = new AbortController();
    const done = () => {
      this.close();
      finished.resolve();
    };
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#forceEnd = () => {
          cancelled.abort();
          done();
          // Gives back the share of the budget the batch it was sending holds, once that read lets go of it.
          void pieces.return(undefined);
          controller.close();
        };
      },
      pull: async (controller) => {
        let next: IteratorResult<Uint8Array>;
        try {
          next = await (firstPiece ?? pieces.next());
        } catch (error) {
          // Whatever went wrong, the stream's slot and notices are let go, and its client reconnects.
          done();
          return controller.error(error);
        } finally {
          firstPiece = undefined;
        }
        // Cancelled while this read was under way: the stream is closed already.
        if (cancelled.signal.aborted) return;
        if (!next.done) return controller.enqueue(next.value);
        done();
        controller.close();
      },
      cancel: async () => {
        cancelled.abort();
        this.close();
        await pieces.return(undefined);
        done();
      },
    }, { highWaterMark: 0 });
  }

  /** The text of one batch: its changes, then `ready` if this is the first time the stream has caught up. */
  #batchText(page: ChangesPageRead | undefined): string {
    const owner = this.#caller.sub;
    let text = "";
    for (const { change, entry } of page?.changes ?? []) {
      text += serverEvent({ event: "change", id: encodeChangesCursor(owner, change), data: entry });
    }
    this.#position = page?.reached ?? this.#position;
    if (!this.#ready && !page?.hasMore) {
      this.#ready = true;
      const cursor = encodeChangesCursor(owner, this.#position);
      text += serverEvent({ event: "ready", id: cursor, data: { cursor } satisfies StreamReady });
    }
    return text;
  }

  /** What follows the first batch: further batches as the owner's sequence moves, comments, the last word. */
  async *#following(): AsyncGenerator<string> {
    const { keepAliveSeconds } = getConfig().streams;
    const ended = this.#ended.signal;
    let catchingUp = !this.#ready;
    try {
      while (!this.#over) {
        if (ended.aborted) return yield reconnectAfter(plannedEndRetryMs);
        if (!catchingUp) {
          const woken = await this.#waker.wait(keepAliveSeconds * 1_000, ended);
          if (ended.aborted) continue;
          if (!woken) yield serverComment("keep-alive");
        }
        const batch = reserveBatch(this.#caller.sub);
        if (batch.limit === 0) return yield reconnectAfter(busyRetryMs);
        let page: ChangesPageRead;
        try {
          // A deadline of its own: this read is no part of the request that opened the stream.
          page = await withDatabaseDeadline(() => readChangesPage(this.#caller, this.#position, batch.limit));
        } catch (error) {
          return yield* endAfterFailedRead(error);
        } finally {
          batch.release();
        }
        catchingUp = page.hasMore;
        const text = this.#batchText(page);
        if (text) yield text;
      }
    } finally {
      this.close();
    }
  }
}

/**
 * How many changes a stream of `owner` may read now, and that many changes
 * of the largest size counted as being read for the owner until `release`
 * (once the batch is read), so streams of one account that read at once do
 * not all count on the same room:
 *
 * - none once the account's unread batches fill its share: that stream ends
 *   with a retry hint and reads nothing;
 * - else no more than the rest of the share, less what its other streams are
 *   reading, could hold if each change were as large as a change can be, and
 *   no more than the isolate's answer budget could; but at least one, since a
 *   batch of small notes never draws on the budget, so neither what other
 *   accounts hold in it nor the account's own streams reading at once can
 *   stop a stream (a large one that then finds no room ends with a retry hint).
 */
function reserveBatch(owner: string): { limit: number; release: () => void } {
  const held = heldByOwner.get(owner) ?? 0;
  const reading = readingByOwner.get(owner) ?? 0;
  const byShare = Math.floor((ownerShareBytes - held - reading) / largestChangeBytes);
  const byBudget = Math.floor(answerBudgetRoom() / largestChangeBytes);
  const limit = held + largestChangeBytes > ownerShareBytes ? 0 : Math.max(1, Math.min(batchSize, byShare, byBudget));
  const reserved = limit * largestChangeBytes;
  addTo(readingByOwner, owner, reserved);
  let released = false;
  return {
    limit,
    release: () => {
      if (released) return;
      released = true;
      addTo(readingByOwner, owner, -reserved);
    },
  };
}

/** Adds `bytes` (or takes them away, when negative) to what `counts` holds for `owner`. */
function addTo(counts: Map<string, number>, owner: string, bytes: number): void {
  const total = (counts.get(owner) ?? 0) + bytes;
  if (total > 0) counts.set(owner, total);
  else counts.delete(owner);
}

/**
 * The stream's texts as pieces of its body, each held against the isolate's
 * answer budget (`http/answer-budget.ts`) and its owner's share of it until
 * the client has taken it, as the notes' other large answers are: a batch of
 * catch-up can be 3 MB, which clients that open streams and never read would
 * otherwise each hold. Small texts (under 64 KB) never wait on the budget.
 * When it has no room, the stream ends with a reconnect hint, and the client
 * resumes from the last event it took.
 */
async function* budgetedPieces(
  owner: string,
  first: string,
  following: AsyncGenerator<string>,
): AsyncGenerator<Uint8Array> {
  try {
    for (let text: string | undefined = first; text !== undefined;) {
      const answer = budgetedBody(text);
      if (!answer) return yield encoder.encode(reconnectAfter(busyRetryMs));
      const held = Number(answer.contentLength ?? 0);
      addTo(heldByOwner, owner, held);
      try {
        yield* piecesOf(answer.body);
      } finally {
        addTo(heldByOwner, owner, -held);
      }
      const next = await following.next();
      text = next.done ? undefined : next.value;
    }
  } finally {
    await following.return(undefined);
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
