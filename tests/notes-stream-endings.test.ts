/**
 * `GET /notes-stream`, how streams end: on a stack whose streams end after
 * 3 s and which only polls (behind PgBouncer on a pooler run), for the
 * server's close and the client's resume, and on stacks of their own for a
 * stack that shuts down, a client that stops reading, a notice URL that
 * cannot work, `npm start`'s own PGlite, a blip of the notice connection and
 * the planned end's jitter.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Note } from "../supabase/functions/_shared/contract/mod.ts";
import { call, registerUser } from "./support/api.ts";
import { type OpenStream, openStream } from "../dev/harness/event-stream.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";
import { sharedStackLimits, startStack } from "../dev/harness/stack.ts";
import {
  create,
  expectChangesWithinASecond,
  feedSince,
  isEvent,
  openReady,
  remove,
  secondSession,
} from "./support/streams.ts";

let ending: ScratchStack;

beforeAll(async () => {
  ending = await startScratchStack("notes_stream_end", {
    behindPooler: true,
    poll: true,
    env: { ...sharedStackLimits, STREAM_MAX_SECONDS: "3" },
  });
}, 120_000);

afterAll(async () => {
  await ending?.stop();
});

describe("GET /notes-stream, ended by the server", () => {
  it(
    "ends each stream with a retry hint, and resuming from the last id loses nothing and repeats nothing",
    async () => {
      const user = await registerUser("stream-cycles", { baseUrl: ending.baseUrl });
      const phone = await secondSession(ending, user);
      const first = await openStream(ending.baseUrl, user.accessToken);
      const ready = await first.waitFor(isEvent("ready"), 10_000);
      const received: unknown[] = [];
      let lastId = (ready as { id: string }).id;
      let stream = first;
      let writing = true;
      let written = 0;
      // Writes go on through every end and reconnect.
      const writer = (async () => {
        while (writing) {
          await create(ending, phone, `cycle ${written++}`);
          await new Promise((resolve) => setTimeout(resolve, 150));
        }
      })();
      for (let cycle = 0; cycle < 3; cycle++) {
        await stream.ended;
        expect(stream.messages.at(-1)).toMatchObject({ kind: "retry" });
        for (const message of stream.messages) {
          if (message.kind !== "event") continue;
          if (message.event === "change") received.push(JSON.parse(message.data));
          lastId = message.id ?? lastId;
        }
        stream = await openStream(ending.baseUrl, user.accessToken, { lastEventId: lastId });
        expect(stream.status, stream.text).toBe(200);
      }
      writing = false;
      await writer;
      stream.close();
      const expected = await feedSince(ending, user, (ready as { id: string }).id);
      const fromLastStream = stream.changes().map(({ change }) => change);
      expect([...received, ...fromLastStream].slice(0, received.length)).toEqual(expected.slice(0, received.length));
      const titles = received.map((change) => (change as Note).title);
      expect(new Set(titles).size).toBe(titles.length);
      expect(titles).toEqual(Array.from({ length: titles.length }, (_, i) => `cycle ${i}`));
      expect(titles.length).toBeGreaterThan(10);
    },
    60_000,
  );

  it("still delivers changes within 5 s when nothing listens (the poll, through PgBouncer on a pooler run)", async () => {
    const user = await registerUser("stream-poll", { baseUrl: ending.baseUrl });
    const { stream } = await openReady(ending, user);
    try {
      const from = stream.messages.length;
      await create(ending, user, "polled");
      const answeredAt = performance.now();
      const event = await stream.waitFor(isEvent("change"), 5_000, from);
      expect(event.at - answeredAt).toBeLessThan(5_000);
    } finally {
      stream.close();
    }
  });

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

  it("answers a cursor older than the kept deletions with a reset event, then ends", async () => {
    const user = await registerUser("stream-reset", { baseUrl: ending.baseUrl });
    const note = await create(ending, user, "soon gone");
    const { stream, cursor } = await openReady(ending, user);
    stream.close();
    await remove(ending, user, note.id);
    // The tombstone's time is up, as after NOTES_TOMBSTONE_DAYS.
    await ending.sql`select app.prune_note_tombstones(0, 1000)`;
    const late = await openStream(ending.baseUrl, user.accessToken, { lastEventId: cursor });
    expect(late.status).toBe(200);
    const reset = await late.waitFor(isEvent("reset"), 5_000);
    expect(JSON.parse((reset as { data: string }).data)).toMatchObject({ code: "cursor_expired" });
    await late.ended;
    expect(late.changes()).toEqual([]);
  });
});

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

describe("GET /notes-stream, its planned end", () => {
  it("comes at STREAM_MAX_SECONDS less a random part of a tenth, so streams opened together end apart", async () => {
    const spread = await startScratchStack("notes_stream_jitter", {
      env: { ...sharedStackLimits, BCRYPT_COST: "4", STREAM_MAX_SECONDS: "10", STREAM_MAX_PER_USER: "20" },
    });
    try {
      const user = await registerUser("stream-jitter", { baseUrl: spread.baseUrl });
      // One after another, within a second or so: each one's time is counted from its own answer.
      const streams: { stream: OpenStream; openedAt: number }[] = [];
      for (let i = 0; i < 20; i++) {
        const stream = await openStream(spread.baseUrl, user.accessToken);
        expect(stream.status, stream.text).toBe(200);
        streams.push({ stream, openedAt: performance.now() });
      }
      const lasted = await Promise.all(streams.map(async ({ stream, openedAt }) => {
        await stream.ended;
        expect(stream.messages.at(-1)).toMatchObject({ kind: "retry", ms: 1_000 });
        return performance.now() - openedAt;
      }));
      // Each within the last tenth of the 10 s; spread over it (20 draws all within 400 ms of 1 s: about 1 in 10^6).
      expect(Math.max(...lasted), lasted.map(Math.round).join(", ")).toBeLessThan(10_500);
      expect(Math.min(...lasted), lasted.map(Math.round).join(", ")).toBeGreaterThan(8_800);
      expect(Math.max(...lasted) - Math.min(...lasted), lasted.map(Math.round).join(", ")).toBeGreaterThan(400);
    } finally {
      await spread.stop();
    }
  }, 90_000);
});
