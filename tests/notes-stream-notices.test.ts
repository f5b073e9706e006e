/**
 * `GET /notes-stream`, the notices that wake streams: on a stack that runs as
 * `npm start` does, on its own embedded PGlite, and through a blip of the
 * notice connection.
 */
import { describe, expect, it } from "vitest";
import { call, registerUser } from "./support/api.ts";
import type { OpenStream } from "../dev/harness/event-stream.ts";
import { startScratchStack } from "./support/scratch-stack.ts";
import { sharedStackLimits, startStack } from "../dev/harness/stack.ts";
import { create, expectChangesWithinASecond, isEvent, openReady } from "./support/streams.ts";

describe("GET /notes-stream, woken at once wherever the stack runs", () => {
  it(
    "on a stack that runs as npm start does, on its own embedded PGlite: a change within 1 s (p95 of 20)",
    async () => {
      // No DATABASE_URL: the stack opens an embedded PGlite of its own, in its own process, and listens on it.
      const own = await startStack({ env: { ...sharedStackLimits, BCRYPT_COST: "4" } });
      try {
        await expectChangesWithinASecond({
          baseUrl: own.baseUrl,
          call: (path, request = {}) => call(path, { ...request, baseUrl: own.baseUrl }),
        });
      } finally {
        await own.stop();
      }
    },
    90_000,
  );
});

describe("GET /notes-stream, a blip of the notice connection", () => {
  it("leaves idle streams open, or ends them with a retry hint", async () => {
    // The stack reaches its database, and listens on it, through a proxy the test cuts. A keep-alive every 4 s and a
    // send-stall timeout of 6 s: a stream that sent nothing for 6 s is closed by the stack's server, with no hint.
    const blip = await startScratchStack("notes_stream_blip", {
      proxied: true,
      env: { ...sharedStackLimits, BCRYPT_COST: "4", STREAM_KEEPALIVE_SECONDS: "4", SEND_STALL_TIMEOUT_MS: "6000" },
    });
    const streams: OpenStream[] = [];
    try {
      const user = await registerUser("stream-blip", { baseUrl: blip.baseUrl });
      // Opened half a second apart, so their keep-alives fall all over the 4 s between two of them.
      for (let i = 0; i < 8; i++) {
        streams.push((await openReady(blip, user)).stream);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      // Twice: every connection to the database dropped, then let through again; the notice connection comes back
      // a second later and wakes every stream, which finds nothing new.
      for (let blips = 0; blips < 2; blips++) {
        blip.proxy?.cut();
        await new Promise((resolve) => setTimeout(resolve, 100));
        blip.proxy?.restore();
        await new Promise((resolve) => setTimeout(resolve, 5_000));
      }
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      for (const stream of streams) {
        if (stream.isEnded()) {
          expect(stream.messages.at(-1), JSON.stringify(stream.messages)).toMatchObject({ kind: "retry" });
        }
      }
      // And the streams still open still carry changes: each watched from its own count of messages (filtering
      // first would pair a stream with another's count once one of them had ended).
      const open = streams.filter((stream) => !stream.isEnded()).map((stream) => ({
        stream,
        from: stream.messages.length,
      }));
      await create(blip, user, "after the blips");
      await Promise.all(open.map(({ stream, from }) => stream.waitFor(isEvent("change"), 10_000, from)));
    } finally {
      for (const stream of streams) stream.close();
      await blip.stop();
    }
  }, 90_000);
});
