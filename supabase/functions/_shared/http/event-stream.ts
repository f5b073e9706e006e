/**
 * Server-sent events (WHATWG HTML, "Server-sent events"): the lines of each
 * kind of message, and the response that carries them. A field's value ends
 * at a line break, so every value written here is one line: JSON (which
 * escapes its line breaks), cursors (base64url) and numbers.
 *
 * @example
 * ```ts
 * controller.enqueue(encoder.encode(serverEvent({ event: "change", id: cursor, data: change })));
 * return eventStreamResponse(body, answerHeaders.notes);
 * ```
 */

/** An event with a name, an id (what `Last-Event-ID` carries back on reconnect) when given, and JSON data. */
export function serverEvent(message: { event: string; id?: string; data: unknown }): string {
  const id = message.id === undefined ? "" : `id: ${message.id}\n`;
  return `event: ${message.event}\n${id}data: ${JSON.stringify(message.data)}\n\n`;
}

/** A comment: ignored by clients, it keeps proxies from closing a connection that looks idle. */
export function serverComment(text: string): string {
  return `: ${text}\n\n`;
}

/** How long a client waits before reconnecting once this stream has ended. */
export function reconnectAfter(ms: number): string {
  return `retry: ${ms}\n\n`;
}

/** A 200 `text/event-stream` answer of `body`, with an endpoint's own headers; never cached or buffered. */
export function eventStreamResponse(body: ReadableStream<Uint8Array>, headers: Readonly<Record<string, string>>) {
  return new Response(body, {
    status: 200,
    headers: {
      ...headers,
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store",
      // Proxies that buffer answers (nginx, and those that copy its header) pass each event on at once.
      "X-Accel-Buffering": "no",
    },
  });
}
