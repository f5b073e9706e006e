/**
 * Clients that hold connections instead of sending requests: half-sent
 * headers, idle keep-alive sockets and answers never read. The stack of this
 * suite runs with short timeouts of its own, so the tests wait seconds, not the
 * defaults. Floods of connections past the process's descriptor limit are in
 * `load/connection-floods.load.ts` (`npm run test:load`).
 */
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";

let stack: ScratchStack;

beforeAll(async () => {
  stack = await startScratchStack("connections", {
    env: { HEADERS_TIMEOUT_MS: "1000", KEEP_ALIVE_TIMEOUT_MS: "1000", SEND_STALL_TIMEOUT_MS: "1000" },
  });
});

afterAll(async () => {
  await stack?.stop();
});

/** Opens a raw connection to `baseUrl`'s host and resolves once connected. */
function open(baseUrl: string): Promise<Socket> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => resolve(socket)).on("error", reject);
  });
}

/** Everything the server sends until it closes the socket, and how long after `since` it closed. */
function untilClosed(socket: Socket, since: number, limitMs: number): Promise<{ text: string; afterMs: number }> {
  return new Promise((resolve) => {
    let text = "";
    socket.setEncoding("utf8").on("data", (chunk) => (text += chunk));
    const timer = setTimeout(() => resolve({ text, afterMs: Infinity }), limitMs);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve({ text, afterMs: performance.now() - since });
    });
  });
}

describe("connections that send nothing useful", () => {
  it("closes a connection whose headers have not all arrived within the header timeout, answering 408", async () => {
    const socket = await open(stack.baseUrl);
    const started = performance.now();
    socket.write(`GET /functions/v1/notes-fetch HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: `);
    // One more header byte now and then: the timeout is on the whole header block, not on silence.
    const drip = setInterval(() => socket.writable && socket.write("a"), 200);
    const { text, afterMs } = await untilClosed(socket, started, 5_000);
    clearInterval(drip);
    socket.destroy();
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    // One second of timeout, checked every half second.
    expect(afterMs).toBeGreaterThanOrEqual(900);
    expect(afterMs).toBeLessThan(2_500);
  });

  it("closes an idle keep-alive connection after the keep-alive timeout", async () => {
    const socket = await open(stack.baseUrl);
    socket.write(`GET /functions/v1/notes-fetch HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    const started = performance.now();
    const { text, afterMs } = await untilClosed(socket, started, 5_000);
    socket.destroy();
    expect(text).toMatch(/^HTTP\/1\.1 401 /);
    expect(afterMs).toBeLessThan(2_500);
  });
});

describe("a client that does not read its answers", () => {
  it("has its connection closed once the answer makes no progress for the send stall timeout", async () => {
    const bundle = "/docs/swagger-ui-bundle.js";
    const size = Number((await fetch(new URL(bundle, stack.baseUrl))).headers.get("content-length"));
    const socket = await open(stack.baseUrl);
    // Reads nothing: twenty pipelined requests for the 1.7 MB script are more than the kernel's buffers hold.
    socket.pause();
    socket.write(`GET ${bundle} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`.repeat(20));
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    // Reading again: what arrives is what the kernel held when the stack gave up, then the end of the connection.
    let received = 0;
    const ended = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 5_000);
      socket.on("data", (chunk) => (received += chunk.length)).on("error", () => {}).once("close", () => {
        clearTimeout(timer);
        resolve(true);
      });
      socket.resume();
    });
    socket.destroy();
    expect(ended).toBe(true);
    // Cut off: what the kernel held, far from the twenty answers asked for.
    expect(received).toBeLessThan(20 * size);
  });
});
