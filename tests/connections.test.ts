/**
 * Clients that hold connections instead of sending requests: half-sent
 * headers, idle keep-alive sockets, answers never read, and a flood of
 * slow-header connections past the process's descriptor limit. Each stack of this suite runs with
 * short timeouts of its own, so the tests wait seconds, not the defaults.
 */
import { spawn, spawnSync } from "node:child_process";
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

const slowHttpTestFound = spawnSync("sh", ["-c", "command -v slowhttptest"]).status === 0;

describe("a flood of slow-header connections", () => {
  // Debian's slowhttptest; `.ci/run` installs it.
  it.skipIf(!slowHttpTestFound)(
    "leaves the stack alive and answering after 4,500 slow-header connections at a 4,096-descriptor limit",
    async () => {
      // Headers may take the longest allowed (15 s), so the connections pile up past the cap before the first times out.
      const flooded = await startScratchStack("connections_flood", {
        env: { HEADERS_TIMEOUT_MS: "15000" },
        openFilesLimit: 4_096,
      });
      try {
        const url = `${flooded.baseUrl}/notes-fetch`;
        // slowhttptest needs a descriptor per connection too.
        const flood = spawn("sh", [
          "-c",
          `ulimit -n 8192 && exec slowhttptest -c 4500 -H -r 300 -i 5 -l 22 -p 3 -u ${url}`,
        ], { stdio: "ignore" });
        const floodEnded = new Promise((resolve) => flood.once("exit", resolve));
        const answers: number[] = [];
        // A regular client keeps calling while the flood runs, and once it is over.
        const probe = async () => {
          const response = await fetch(url, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
          answers.push(response?.status ?? 0);
          await response?.body?.cancel();
        };
        const probing = setInterval(probe, 2_000);
        await floodEnded;
        clearInterval(probing);
        await probe();
        expect(process.kill(flooded.pid, 0)).toBe(true);
        expect(answers.at(-1)).toBe(401);
        // Answered throughout, but for the moments at the cap, when a new connection is refused.
        expect(answers.filter((status) => status === 401).length).toBeGreaterThanOrEqual(answers.length - 2);
      } finally {
        await flooded.stop();
      }
    },
    90_000,
  );
});

describe("more connections than descriptors", () => {
  it("refuses connections past its cap and goes on answering once they are gone", async () => {
    // A limit of 1,024 descriptors leaves room for 512 connections.
    const small = await startScratchStack("connections_cap", { openFilesLimit: 1_024 });
    try {
      const url = new URL(small.baseUrl);
      let refused = 0;
      const sockets = Array.from(
        { length: 3_000 },
        () => connect(Number(url.port), url.hostname).on("error", () => {}).on("close", () => refused++),
      );
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const refusedWhileOpen = refused;
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(refusedWhileOpen).toBeGreaterThan(1_000);
      const response = await fetch(`${small.baseUrl}/notes-fetch`, { signal: AbortSignal.timeout(5_000) });
      expect(response.status).toBe(401);
      expect(process.kill(small.pid, 0)).toBe(true);
    } finally {
      await small.stop();
    }
  }, 60_000);
});
