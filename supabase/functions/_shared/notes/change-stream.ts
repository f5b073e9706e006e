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
 * row-level security, behind the check that their session is still live.
 * When it has sent nothing for `STREAM_KEEPALIVE_SECONDS` it sends a comment
 * and reads anyway, which ends the stream of a session that has ended and
 * catches a notice that was lost. What it may read and hold is bounded in
 * `stream-budget.ts`; how it ends, in `stream-endings.ts`.
 *
 * @example
 * ```ts
 * return eventStreamResponse(await openChangeStream(caller, after, endsAt), answerHeaders.notes);
 * ```
 */
import type { Caller } from "../auth/caller.ts";
import type { StreamReady } from "../contract/notes.ts";
import { getConfig } from "../config/mod.ts";
import { watchChanges } from "../db/change-notices.ts";
import { CursorExpiredError, TooManyRequestsError } from "../http/errors.ts";
import { reconnectAfter, serverComment, serverEvent } from "../http/event-stream.ts";
import { withDatabaseDeadline } from "../http/request-deadline.ts";
import { edgeRuntimeWaitUntil } from "../http/after-response.ts";
import { encodeChangesCursor } from "./changes-cursor.ts";
import { claimStreamSlot } from "./open-streams.ts";
import { type ChangesPageRead, readChangesEnd, readChangesPage } from "./changes-page.ts";
import { budgetedPieces, busyRetryMs, reserveBatch } from "./stream-budget.ts";
import { lastWordAfterFailedRead, plannedEndRetryMs, resetEvent } from "./stream-endings.ts";
import { Waker } from "./stream-waker.ts";

/** How long a stream whose time is up may take to send what it has left before it is closed anyway. */
const endGraceMs = 5_000;
/** How long an account over its streams waits before trying again: time for one of its streams to end. */
const tooManyStreamsRetrySeconds = 15;

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
    await stream.readFirstBatch(after);
    return stream.body();
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
  /** Whether the last read left changes to read at once. */
  #catchingUp = false;
  /** Whether the next text is a read's, without waiting: a keep-alive went out, and a read follows it. */
  #readDue = false;
  /** When the client last took something: each text is asked for once the one before it has been taken. */
  #lastSent = performance.now();
  /** The first batch's text, read before the answer, until the body sends it. */
  #firstText: string | undefined;
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

  /** Reads the first batch: the changes after `after` (or none, from the end), `ready` once caught up. */
  async readFirstBatch(after: number | undefined): Promise<void> {
    if (after === undefined) {
      this.#position = await readChangesEnd(this.#caller);
      this.#firstText = this.#batchText(undefined);
      return;
    }
    const batch = reserveBatch(this.#caller.sub);
    // The account's unread batches fill its share: read nothing, and let the client come back once they are let go.
    if (batch.limit === 0) {
      this.#firstText = this.#lastWord(reconnectAfter(busyRetryMs));
      return;
    }
    try {
      this.#firstText = this.#batchText(await readChangesPage(this.#caller, after, batch.limit));
    } catch (error) {
      if (!(error instanceof CursorExpiredError)) throw error;
      this.#firstText = this.#lastWord(resetEvent());
    } finally {
      batch.release();
    }
  }

  /**
   * The stream's body, starting with the first batch. Its pieces are pulled
   * one at a time, so a client that does not read holds one batch at most,
   * and each batch is held against the isolate's answer budget until the
   * client has taken it.
   */
  body(): ReadableStream<Uint8Array> {
    this.#lastSent = performance.now();
    const pieces = budgetedPieces(this.#caller.sub, () => this.#nextText());
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
    this.#catchingUp = page?.hasMore ?? false;
    if (!this.#ready && !this.#catchingUp) {
      this.#ready = true;
      const cursor = encodeChangesCursor(owner, this.#position);
      text += serverEvent({ event: "ready", id: cursor, data: { cursor } satisfies StreamReady });
    }
    return text;
  }

  /** `text` as the stream's last word: nothing follows it. */
  #lastWord<Text extends string | undefined>(text: Text): Text {
    this.#over = true;
    return text;
  }

  /**
   * What the stream sends next, once there is something, asked for when the
   * client has taken what came before: the first batch, further batches as
   * the owner's sequence moves, keep-alive comments, the last word; undefined
   * once it has nothing more to send. A method, not a generator, so nothing
   * it read stays referenced while its client takes the text.
   */
  async #nextText(): Promise<string | undefined> {
    const first = this.#firstText;
    if (first !== undefined) {
      this.#firstText = undefined;
      return first;
    }
    const keepAliveMs = getConfig().streams.keepAliveSeconds * 1_000;
    const ended = this.#ended.signal;
    while (!this.#over) {
      if (ended.aborted) return this.#sent(this.#lastWord(reconnectAfter(plannedEndRetryMs)));
      if (!this.#catchingUp && !this.#readDue) {
        // Counted from the last thing sent, not from the last wake-up: a wake-up that finds nothing new (every
        // stream's, once the notice connection is back) must not put off the keep-alive, or the stack's send-stall
        // timeout and idle proxies close the stream with no reconnect hint.
        const woken = await this.#waker.wait(Math.max(0, this.#lastSent + keepAliveMs - performance.now()), ended);
        if (ended.aborted) continue;
        if (!woken) {
          // The read follows once the comment is taken: it ends the stream of a session that has ended.
          this.#readDue = true;
          return this.#sent(serverComment("keep-alive"));
        }
      }
      this.#readDue = false;
      const text = await this.#readNextBatch();
      if (text) return this.#sent(text);
    }
    return undefined;
  }

  /** The text of the changes after the stream's position ("" when there are none), or its last word. */
  async #readNextBatch(): Promise<string | undefined> {
    const batch = reserveBatch(this.#caller.sub);
    if (batch.limit === 0) return this.#lastWord(reconnectAfter(busyRetryMs));
    try {
      // A deadline of its own: this read is no part of the request that opened the stream.
      const page = await withDatabaseDeadline(() => readChangesPage(this.#caller, this.#position, batch.limit));
      return this.#batchText(page);
    } catch (error) {
      return this.#lastWord(lastWordAfterFailedRead(error));
    } finally {
      batch.release();
    }
  }

  /** Notes that `text` goes out now, for the keep-alive's count. */
  #sent(text: string): string {
    this.#lastSent = performance.now();
    return text;
  }
}
