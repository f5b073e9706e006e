/**
 * A live watch of the signed-in user's notes over `GET /notes-stream`: server-sent events read through `fetch`,
 * connected again after each end or failure, from the last cursor given.
 */
import {
  bearer,
  type NoteChange,
  noteChange,
  streamReady,
  streamReset,
} from "../../supabase/functions/_shared/contract/mod.ts";
import { NotesApiError } from "../errors.ts";
import { backoffMs, eventStreamFields, pause } from "../event-stream.ts";
import { lastEventIdHeader, operations } from "../operations.ts";
import { failure, readJson, unreachable } from "./failures.ts";
import type { Transport } from "./transport.ts";

/** Where a watch is: opening its first connection, caught up and live, or connecting again after one ended. */
export type WatchStatus = "connecting" | "live" | "reconnecting";

/** What {@link NotesApi.watchChanges} takes. */
export interface WatchChangesOptions {
  /**
   * Where to start: the `cursor` of `notes.changes`/`notes.sync`, or one this watch gave before. Without it the watch
   * starts at the end of the feed: only changes made from then on.
   */
  since?: string;
  /**
   * Called with each change, in order, and the cursor just after it (keep it to resume from there). When it
   * answers a promise, the next change waits for it.
   */
  onChange: (change: NoteChange, cursor: string) => void | Promise<void>;
  /** Called once per connection, when every change missed before it has been given: from then on, live. */
  onReady?: (cursor: string) => void | Promise<void>;
  /**
   * The cursor is older than the deletions the service keeps: the watch has ended. Drop the local copy, sync
   * again without a cursor (`notes.sync()`), and watch again from its cursor.
   */
  onReset?: () => void | Promise<void>;
  /** Called whenever the watch's status changes. */
  onStatus?: (status: WatchStatus) => void;
  /** Ends the watch, and its connection, when it aborts. */
  signal?: AbortSignal;
}

/** An event of the changes stream, its data checked against the contract. */
type ChangeStreamEvent =
  | { kind: "change"; change: NoteChange; cursor: string }
  | { kind: "ready"; cursor: string }
  | { kind: "reset" }
  | { kind: "retry"; ms: number };

/**
 * How long a changes stream may be silent before the watch takes it for
 * lost: three of the service's keep-alives (at least one every 15 s) missed.
 */
const streamSilenceMs = 45_000;

/**
 * A failure that time may mend, after which a watch connects again: no answer
 * (or none in time, or a connection gone silent), a 5xx, or a 429 (the
 * account has as many streams open as it may: one of them may end).
 */
function worthReconnecting(error: unknown): error is NotesApiError {
  return error instanceof NotesApiError &&
    (error.code === "network_error" || error.code === "timeout" || error.status === 429 || error.status >= 500);
}

/** Runs a watch (see {@link NotesApi.watchChanges}) until it stops, ends or throws. */
export async function runWatch(transport: Transport, options: WatchChangesOptions): Promise<void> {
  const { signal } = options;
  let cursor = options.since;
  // Failed attempts since the stream was last live, and the wait before the next attempt.
  let failures = 0;
  let waitMs = 0;
  for (let attempt = 0; !signal?.aborted; attempt++) {
    if (waitMs > 0) await pause(waitMs, signal);
    if (signal?.aborted) return;
    options.onStatus?.(attempt === 0 ? "connecting" : "reconnecting");
    // Ends this connection: when the watch is stopped, and once it is done with it, however that happened.
    const connection = new AbortController();
    const stop = () => connection.abort();
    signal?.addEventListener("abort", stop, { once: true });
    const events = changeStream(transport, options.since, cursor, connection.signal, signal);
    let retryMs: number | undefined;
    try {
      for (;;) {
        let next: IteratorResult<ChangeStreamEvent, void>;
        try {
          next = await events.next();
        } catch (error) {
          if (signal?.aborted) return;
          if (!worthReconnecting(error)) throw error;
          const retryAfterMs = error.retryAfter === undefined ? undefined : error.retryAfter * 1000;
          waitMs = retryAfterMs ?? backoffMs(failures++);
          break;
        }
        if (next.done) {
          // An end the service planned says when to come back; any other is a failure.
          waitMs = retryMs ?? backoffMs(failures++);
          break;
        }
        const event = next.value;
        if (event.kind === "retry") {
          retryMs = event.ms;
        } else if (event.kind === "change") {
          await options.onChange(event.change, event.cursor);
          cursor = event.cursor;
        } else if (event.kind === "ready") {
          cursor = event.cursor;
          failures = 0;
          options.onStatus?.("live");
          await options.onReady?.(event.cursor);
        } else {
          await options.onReset?.();
          return;
        }
      }
    } finally {
      signal?.removeEventListener("abort", stop);
      connection.abort();
      await events.return();
    }
  }
}

/**
 * One connection of the changes stream, from `since` or after
 * `lastEventId`: its events, in order, until it ends. Opening it has the
 * client's `timeoutMs` and refreshes the token as any call does; after
 * that only `connection` ends it. Throws as `Transport.send` does, and status 0
 * (`network_error`, or `timeout` once silent too long) when it is lost.
 */
async function* changeStream(
  transport: Transport,
  since: string | undefined,
  lastEventId: string | undefined,
  connection: AbortSignal,
  signal: AbortSignal | undefined,
): AsyncGenerator<ChangeStreamEvent, void, undefined> {
  const spec = operations.streamChanges;
  const url = transport.url(spec);
  if (since !== undefined) url.searchParams.set("since", since);
  const deadline = transport.deadline({ signal });
  const response = await transport.signedIn(deadline, async (accessToken) => {
    if (deadline.signal.aborted) throw deadline.error();
    const headers: Record<string, string> = {
      apikey: transport.anonKey,
      Authorization: bearer(accessToken),
      Accept: "text/event-stream",
    };
    // What EventSource sends when it reconnects; it wins over the `since` of the URL.
    if (lastEventId !== undefined) headers[lastEventIdHeader] = lastEventId;
    let response: Response;
    try {
      response = await deadline.race(transport.fetch(url, { headers, signal: connection }));
    } catch (cause) {
      if (deadline.signal.aborted) throw deadline.error();
      throw unreachable(url, cause);
    }
    if (!response.ok) throw failure(spec, response, await readJson(response).catch(() => undefined));
    return response;
  });
  const unexpected = (message: string, cause?: unknown) =>
    new NotesApiError({
      status: response.status,
      code: "unexpected_response",
      message,
      requestId: response.headers.get("x-request-id") ?? undefined,
      cause,
    });
  if (!response.body || !response.headers.get("content-type")?.startsWith("text/event-stream")) {
    throw unexpected("The streamChanges response is not an event stream");
  }
  try {
    for await (const field of eventStreamFields(response.body, streamSilenceMs)) {
      if (field.kind === "retry") {
        yield field;
        continue;
      }
      const { event, id, data } = field.message;
      // Events this client does not know (from a newer service) are skipped, as EventSource skips them.
      if (event !== "change" && event !== "ready" && event !== "reset") continue;
      let json: unknown;
      try {
        json = JSON.parse(data);
      } catch (cause) {
        throw unexpected(`The ${event} event's data is not JSON`, cause);
      }
      if (event === "reset") {
        const reset = streamReset.safeParse(json);
        if (!reset.success) throw unexpected("The reset event does not match the API contract", reset.error);
        yield { kind: "reset" };
        return;
      }
      if (event === "ready") {
        const ready = streamReady.safeParse(json);
        if (!ready.success) throw unexpected("The ready event does not match the API contract", ready.error);
        yield { kind: "ready", cursor: ready.data.cursor };
        continue;
      }
      const change = noteChange.safeParse(json);
      if (!change.success || !id) throw unexpected("A change event does not match the API contract", change.error);
      yield { kind: "change", change: change.data, cursor: id };
    }
  } catch (cause) {
    // The body failed midway: the connection was cut (or went silent, which is already a NotesApiError).
    throw cause instanceof NotesApiError ? cause : unreachable(url, cause);
  }
}
