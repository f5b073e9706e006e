/**
 * Floods of connections past the process's descriptor limit: thousands of
 * slow-header connections (Debian's `slowhttptest`, which `.ci/run` installs),
 * and thousands of idle sockets. The stack refuses what it cannot hold, stays
 * alive, and answers a regular client throughout and afterwards.
 */
import { spawn } from "node:child_process";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { startScratchStack } from "../support/scratch-stack.ts";

describe("a flood of slow-header connections", () => {
  it(
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
