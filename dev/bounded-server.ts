/**
 * The local stack's HTTP server: the functions' `Request -> Response`
 * handlers served by Node's `http` server (under Deno's Node compatibility)
 * rather than by `Deno.serve`. `Deno.serve` offers no header, request or idle
 * timeout and no connection cap (its options are port, hostname, backlog,
 * compression, signal and callbacks), so a few thousand half-sent requests
 * hold every file descriptor until its accept loop throws "Too many open
 * files" and the process exits. Node's server bounds each of those. It has no
 * bound on a client that asks and then does not read its answer, so this
 * module adds one: an answer that makes no progress for `sendStallTimeoutMs`
 * closes its connection.
 *
 * @example
 * ```ts
 * const server = await serveBounded(handler, { hostname: "127.0.0.1", port: 0, ...bounds });
 * console.log(server.port);
 * ```
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Readable } from "node:stream";
import type { Handler } from "../supabase/functions/_shared/http/endpoint.ts";

export interface ServerBounds {
  /** All of a request's headers must arrive within this time of its first byte, else 408 and the socket closes. */
  headersTimeoutMs: number;
  /** A whole request must arrive within this time; a backstop behind the functions' own body deadline. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this time. */
  keepAliveTimeoutMs: number;
  /** Open connections; past it a new connection is closed at once (below the descriptor limit, so never EMFILE). */
  maxConnections: number;
  /** An answer of which the connection takes nothing more for this long is abandoned and its connection closed. */
  sendStallTimeoutMs: number;
}

export interface BoundedServer {
  port: number;
  /**
   * Stops taking connections and closes the idle ones; answers under way have `graceMs` (none by default) to
   * finish, after which their connections are closed too.
   */
  close(graceMs?: number): Promise<void>;
}

/** How often Node checks the header and request timeouts; its default of 30 s would stretch a 10 s timeout to 40. */
const timeoutCheckIntervalMs = 500;

/** Serves `handler` on `hostname:port` within `bounds`; resolves once listening. */
export function serveBounded(
  handler: Handler,
  options: { hostname: string; port: number } & ServerBounds,
): Promise<BoundedServer> {
  const server = createServer({
    headersTimeout: options.headersTimeoutMs,
    requestTimeout: options.requestTimeoutMs,
    keepAliveTimeout: options.keepAliveTimeoutMs,
    connectionsCheckingInterval: timeoutCheckIntervalMs,
  }, (incoming, outgoing) => {
    exchange(handler, origin, incoming, outgoing, options.sendStallTimeoutMs).catch((error) => {
      console.error(JSON.stringify({ level: "error", event: "answer not written", error: String(error) }));
      outgoing.destroy();
    });
  });
  server.maxConnections = options.maxConnections;
  const port = () => (server.address() as AddressInfo).port;
  // Known once listening, before any request: read then, not from the socket on each request.
  let origin = "";
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.hostname, () => {
      server.off("error", reject);
      origin = `http://${options.hostname}:${port()}`;
      // A failed accept (a descriptor limit reached despite the cap) is logged; the server goes on.
      server.on(
        "error",
        (error) => console.error(JSON.stringify({ level: "error", event: "server error", error: String(error) })),
      );
      resolve({
        port: port(),
        close: (graceMs = 0) =>
          new Promise((done) => {
            const late = setTimeout(() => server.closeAllConnections(), graceMs);
            server.close(() => {
              clearTimeout(late);
              done();
            });
            server.closeIdleConnections();
          }),
      });
    });
  });
}

/** Hands one request to `handler` as a web `Request` and writes its `Response` back with backpressure. */
async function exchange(
  handler: Handler,
  origin: string,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  sendStallTimeoutMs: number,
) {
  const headers = new Headers();
  const raw = incoming.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i], raw[i + 1]);
  const method = incoming.method ?? "GET";
  // The request line's target is a path (or, from a proxy-style client, an absolute URL): only its path and query are used.
  const target = URL.parse(incoming.url ?? "/", origin) ?? new URL(origin);
  const request = new Request(target, {
    method,
    headers,
    body: carriesBody(method) ? Readable.toWeb(incoming) as ReadableStream<Uint8Array> : undefined,
    duplex: "half",
  } as RequestInit);
  const { remoteAddress, remotePort } = incoming.socket;
  const response = await handler(request, {
    remoteAddr: { transport: "tcp", hostname: remoteAddress, port: remotePort },
  } as Deno.ServeHandlerInfo);

  try {
    await sendResponse(response, method, incoming, outgoing, sendStallTimeoutMs);
  } catch (error) {
    // A body never read to its end is cancelled, so whatever it holds (a share of the answer budget) is let go.
    await response.body?.cancel().catch(() => {});
    throw error;
  }
}

/** Writes `response` to `outgoing`, giving up on a client that stops taking it. */
async function sendResponse(
  response: Response,
  method: string,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  sendStallTimeoutMs: number,
) {
  const headerValues: Record<string, string | string[]> = {};
  for (const [name, value] of response.headers) {
    const earlier = headerValues[name];
    headerValues[name] = earlier === undefined ? value : [earlier, value].flat();
  }
  // Answered before its body arrived (408, 413, a refusal): the rest of the body is not worth reading, so the connection ends.
  const closeAfter = carriesBody(method) && !incoming.complete;
  if (closeAfter) headerValues.connection = "close";
  // Taken now: the response lets go of its socket once it has finished.
  const socket = incoming.socket;
  if (closeAfter) outgoing.once("finish", () => socket?.destroy());
  const stall = closeWhenStalled(outgoing, socket, sendStallTimeoutMs);
  // A body of declared length (a `/docs` file, a large answer handed over a piece at a time) and an event stream
  // (a live update stream, which lasts minutes) are streamed. The functions' other answers are small JSON built in
  // memory: written in one piece with its length, which saves chunked encoding and a stream read.
  if (response.headers.has("content-length") || isEventStream(response) || !response.body || method === "HEAD") {
    outgoing.writeHead(response.status, headerValues);
    // The client learns at once that its stream is open, before the first event.
    outgoing.flushHeaders();
    await writeBody(response.body, method === "HEAD" ? undefined : outgoing, stall);
    stall.arm();
    outgoing.end();
    return;
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  headerValues["content-length"] = String(bytes.byteLength);
  outgoing.writeHead(response.status, headerValues);
  outgoing.end(bytes);
}

function isEventStream(response: Response): boolean {
  return response.headers.get("content-type")?.startsWith("text/event-stream") ?? false;
}

function carriesBody(method: string): boolean {
  return method !== "GET" && method !== "HEAD";
}

/** The stall timer of one answer: running while the client has something of it to take. */
interface StallTimer {
  /** Starts the timer again from now: the answer made progress, or has more for the client. */
  arm(): void;
  /** Stops it: the client has taken everything so far, and the answer waits on its own body. */
  disarm(): void;
}

/**
 * Closes the connection once its answer has made no progress for `ms`: no
 * piece taken by the socket (`drain`), nor the last (`finish`). A client that
 * asks and never reads would otherwise hold the answer's memory, and its
 * connection, for good. An event stream waiting for its next event is not
 * stalled: `writeBody` disarms the timer while the client has taken everything.
 */
function closeWhenStalled(outgoing: ServerResponse, socket: Socket, ms: number): StallTimer {
  const stalled = () => socket.destroy();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(stalled, ms);
  };
  const disarm = () => clearTimeout(timer);
  const done = () => {
    disarm();
    outgoing.off("drain", arm);
  };
  arm();
  outgoing.on("drain", arm).once("finish", done).once("close", done);
  return { arm, disarm };
}

/** Writes `body` chunk by chunk, waiting whenever the socket's buffer is full, so a slow reader holds one chunk. */
async function writeBody(
  body: ReadableStream<Uint8Array> | null,
  outgoing: ServerResponse | undefined,
  stall: StallTimer,
) {
  if (!body) return;
  if (!outgoing) return await body.cancel();
  const reader = body.getReader();
  // A client that goes away while the body waits for its next piece (an idle event stream) ends the body now.
  const cancel = () => reader.cancel().catch(() => {});
  outgoing.once("close", cancel);
  try {
    for (;;) {
      // Checked before each read: a dropped connection takes no more of the body, which is cancelled instead.
      if (outgoing.destroyed) return await reader.cancel();
      if (outgoing.writableLength === 0) stall.disarm();
      const { done, value } = await reader.read();
      if (done) return;
      stall.arm();
      if (!outgoing.write(value)) {
        await new Promise<void>((resume) => {
          const go = () => {
            outgoing.off("drain", go).off("close", go);
            resume();
          };
          outgoing.on("drain", go).on("close", go);
        });
      }
    }
  } catch (error) {
    await reader.cancel(error).catch(() => {});
    throw error;
  } finally {
    outgoing.off("close", cancel);
    reader.releaseLock();
  }
}
