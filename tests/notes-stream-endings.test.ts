/**
 * `GET /notes-stream`, how streams end on the server's schedule: on a stack
 * whose streams end after 3 s and which only polls (behind PgBouncer on a
 * pooler run), for the server's close and the client's resume, a cursor past
 * the kept deletions, and on a stack of its own the planned end's jitter. How
 * the stack closes streams it cannot keep is in `notes-stream-closing.test.ts`;
 * the notices that wake streams, in `notes-stream-notices.test.ts`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Note } from "../supabase/functions/_shared/contract/mod.ts";
import { registerUser } from "./support/api.ts";
import { type OpenStream, openStream } from "../dev/harness/event-stream.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";
import { sharedStackLimits } from "../dev/harness/stack.ts";
import { create, feedSince, isEvent, openReady, remove, secondSession } from "./support/streams.ts";

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
