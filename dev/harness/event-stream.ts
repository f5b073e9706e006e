/**
 * A live update stream (`GET /notes-stream`) read the way an app reads it:
 * `fetch` with the bearer token, the body parsed as server-sent events by
 * `eventsource-parser`. Every message is kept with the time it arrived, so a
 * test can wait for one, measure how long it took, or compare the whole
 * sequence with what the changes feed answers.
 */
import { EventSourceParserStream } from "eventsource-parser/stream";
import { bearer } from "../../supabase/functions/_shared/contract/mod.ts";

/** One message of the stream: an event, a comment (keep-alive) or a reconnect hint. */
export type StreamMessage =
  | { kind: "event"; event: string; id: string | undefined; data: string; at: number }
  | { kind: "comment"; text: string; at: number }
  | { kind: "retry"; ms: number; at: number };

export interface OpenStream {
  status: number;
  headers: Headers;
  /** The answer's body when it is not a stream (a refusal). */
  text: string;
  /** Everything received so far, in order. */
  messages: StreamMessage[];
  /** Settles when the server has ended the stream (or the connection dropped). */
  ended: Promise<void>;
  /** Whether the stream has ended. */
  isEnded(): boolean;
  /** The first message from index `from` on that `matches`, waiting up to `ms` for it. */
  waitFor(matches: (message: StreamMessage) => boolean, ms: number, from?: number): Promise<StreamMessage>;
  /** The `change` events received so far, parsed. */
  changes(): { id: string; change: unknown }[];
  close(): void;
}

/** Opens `/notes-stream` on `baseUrl` as the holder of `token`, from `since` or `lastEventId` when given. */
export async function openStream(
  baseUrl: string,
  token: string,
  options: { since?: string; lastEventId?: string; query?: string } = {},
): Promise<OpenStream> {
  const controller = new AbortController();
  const query = options.query ?? (options.since === undefined ? "" : `?since=${encodeURIComponent(options.since)}`);
  const headers: Record<string, string> = { Authorization: bearer(token), Accept: "text/event-stream" };
  if (options.lastEventId !== undefined) headers["Last-Event-ID"] = options.lastEventId;
  const response = await fetch(`${baseUrl}/notes-stream${query}`, { headers, signal: controller.signal });
  const messages: StreamMessage[] = [];
  const arrived = new EventTarget();
  const receive = (message: StreamMessage) => {
    messages.push(message);
    arrived.dispatchEvent(new Event("message"));
  };
  let ended = true;
  let reading: Promise<void> = Promise.resolve();
  let text = "";
  if (response.status === 200 && response.body) {
    ended = false;
    const parsed = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(
      new EventSourceParserStream({
        onComment: (comment) => receive({ kind: "comment", text: comment.trim(), at: performance.now() }),
        onRetry: (ms) => receive({ kind: "retry", ms, at: performance.now() }),
      }),
    );
    reading = (async () => {
      try {
        for await (const event of parsed) {
          receive({
            kind: "event",
            event: event.event ?? "message",
            id: event.id,
            data: event.data,
            at: performance.now(),
          });
        }
      } catch {
        // Aborted by `close`, or the connection dropped: the stream has ended either way.
      } finally {
        ended = true;
        arrived.dispatchEvent(new Event("message"));
      }
    })();
  } else {
    text = await response.text();
  }
  return {
    status: response.status,
    headers: response.headers,
    text,
    messages,
    ended: reading,
    isEnded: () => ended,
    waitFor(matches, ms, from = 0) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = messages.slice(from).find(matches);
          if (found) {
            finish();
            resolve(found);
          } else if (ended) {
            finish();
            reject(new Error(`the stream ended without it; received: ${JSON.stringify(messages)}`));
          }
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`not received within ${ms} ms; received: ${JSON.stringify(messages)}`));
        }, ms);
        const finish = () => {
          clearTimeout(timer);
          arrived.removeEventListener("message", check);
        };
        arrived.addEventListener("message", check);
        check();
      });
    },
    changes() {
      return messages.flatMap((message) =>
        message.kind === "event" && message.event === "change"
          ? [{ id: message.id ?? "", change: JSON.parse(message.data) }]
          : []
      );
    },
    close: () => controller.abort(),
  };
}

/** The change number a cursor (or an event id) stands at: cursors are opaque to apps, not to these tests. */
export function changeNumberOf(cursor: string): number {
  const [, , number] = Buffer.from(cursor, "base64url").toString().split(".");
  return Number(number);
}
