/**
 * `GET /notes-stream`, the streams a stack closes before their time: when it
 * shuts down (each with its reconnect hint), when their client stopped reading
 * (its place freed soon after its time is up), and when no stream can start
 * (a bad notice URL: a 500 every time, holding no place).
 */
import { describe, expect, it } from "vitest";
import { registerUser } from "./support/api.ts";
import { type OpenStream, openStream } from "../dev/harness/event-stream.ts";
import { startScratchStack } from "./support/scratch-stack.ts";
import { sharedStackLimits } from "../dev/harness/stack.ts";
import { openReady } from "./support/streams.ts";

describe("GET /notes-stream, closed by the stack", () => {
  it("ends open streams with their reconnect hint when the stack shuts down", async () => {
    const stopping = await startScratchStack("notes_stream_stop", { env: { ...sharedStackLimits, BCRYPT_COST: "4" } });
    const streams: OpenStream[] = [];
    try {
      const user = await registerUser("stream-shutdown", { baseUrl: stopping.baseUrl });
      for (let i = 0; i < 5; i++) streams.push((await openReady(stopping, user)).stream);
    } finally {
      await stopping.stop();
    }
    for (const stream of streams) {
      await stream.ended;
      expect(stream.messages.at(-1)).toMatchObject({ kind: "retry", ms: 1_000 });
    }
  });

  it("closes a stream whose client stopped reading soon after its time is up, freeing its place", async () => {
    // One stream per account, ending after 2 s; the server's own send-stall timeout is as long as it may be (30 s).
    const stalled = await startScratchStack("notes_stream_unread", {
      env: {
        ...sharedStackLimits,
        BCRYPT_COST: "4",
        STREAM_MAX_SECONDS: "2",
        STREAM_MAX_PER_USER: "1",
        SEND_STALL_TIMEOUT_MS: "30000",
      },
    });
    try {
      const user = await registerUser("stream-unread", { baseUrl: stalled.baseUrl });
      const { cursor } = await openReady(stalled, user).then(({ stream, cursor }) => (stream.close(), { cursor }));
      // 10 MB of notes to catch up on: more than the sockets' buffers take from a client that reads nothing.
      for (let made = 0; made < 100; made += 10) {
        await Promise.all(
          Array.from(
            { length: 10 },
            () => stalled.call("/notes-create", { token: user.accessToken, body: { content: "a".repeat(100_000) } }),
          ),
        );
      }
      const unread = await fetch(`${stalled.baseUrl}/notes-stream?since=${cursor}`, {
        headers: { Authorization: user.accessToken },
      });
      expect(unread.status).toBe(200);
      const opened = performance.now();
      const opens = async () => {
        const stream = await openStream(stalled.baseUrl, user.accessToken);
        stream.close();
        return stream.status;
      };
      // The slot is the account's one: 429 while the unread stream holds it, 200 once it is let go.
      expect(await opens()).toBe(429);
      await expect.poll(opens, { timeout: 15_000, interval: 500 }).toBe(200);
      expect(performance.now() - opened).toBeLessThan(2_000 + 5_000 + 2_000);
      await unread.body?.cancel();
    } finally {
      await stalled.stop();
    }
  }, 60_000);

  it("keeps no slot for a stream that could not start: a bad notice URL is a 500 every time, never a 429", async () => {
    const broken = await startScratchStack("notes_stream_bad_listen", {
      env: { ...sharedStackLimits, BCRYPT_COST: "4", DATABASE_LISTEN_URL: "postgres://[bad" },
    });
    try {
      const user = await registerUser("stream-bad-listen", { baseUrl: broken.baseUrl });
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) {
        statuses.push((await broken.call("/notes-stream", { token: user.accessToken })).status);
      }
      expect(statuses).toEqual(Array(12).fill(500));
    } finally {
      await broken.stop();
    }
  });
});
