/**
 * `GET /notes-stream`: live updates that never lose a change, on a stack as
 * deployed (woken by notices on its database, on a direct connection behind a
 * pooler; keep-alive every 15 s). How streams end, and their stacks of their
 * own, are in `notes-stream-endings.test.ts`, `notes-stream-closing.test.ts`
 * and `notes-stream-notices.test.ts`.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Note } from "../supabase/functions/_shared/contract/mod.ts";
import { type RegisteredUser, registerUser } from "./support/api.ts";
import { changeNumberOf, type OpenStream, openStream } from "../dev/harness/event-stream.ts";
import { changeListEnvelope, expectNotesError } from "./support/notes.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";
import { sharedStackLimits } from "../dev/harness/stack.ts";
import {
  create,
  expectChangesWithinASecond,
  feedSince,
  isEvent,
  openReady,
  remove,
  save,
  secondSession,
} from "./support/streams.ts";

let live: ScratchStack;

beforeAll(async () => {
  // Streams poll every 2 s (the default) while nothing listens: a change within 1 s is a notice's doing.
  live = await startScratchStack("notes_stream", {
    behindPooler: true,
    env: { ...sharedStackLimits, BCRYPT_COST: "4" },
  });
}, 120_000);

afterAll(async () => {
  await live?.stop();
});

describe.concurrent("GET /notes-stream, live", () => {
  it("starts at the feed's end with ready, whose id is the cursor /notes-changes answers", async () => {
    const user = await registerUser("stream-start", { baseUrl: live.baseUrl });
    await create(live, user, "before the stream");
    const { stream, cursor } = await openReady(live, user);
    try {
      expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
      expect(stream.headers.get("cache-control")).toBe("no-store");
      // Nothing that happened before the stream is sent again: it starts at the end.
      expect(stream.changes()).toEqual([]);
      const feed = await live.call("/notes-changes", { token: user.accessToken });
      expect(changeListEnvelope.parse(feed.body).data.cursor).toBe(cursor);
      const ready = stream.messages.find(isEvent("ready"));
      expect(JSON.parse((ready as { data: string }).data)).toEqual({ cursor });
    } finally {
      stream.close();
    }
  });

  it("delivers a change made by another session within 1 s (p95 of 20), woken by a notice", async () => {
    await expectChangesWithinASecond(live);
  }, 90_000);

  it("resumes with Last-Event-ID after 100+ changes with exactly what /notes-changes answers, each once", async () => {
    const user = await registerUser("stream-resume", { baseUrl: live.baseUrl });
    const { stream, cursor } = await openReady(live, user);
    stream.close();
    const notes: Note[] = [];
    for (let i = 0; i < 60; i++) notes.push(await create(live, user, `resume ${i}`));
    for (const note of notes.slice(0, 40)) await save(live, user, note.id, "edited while away");
    for (const note of notes.slice(20, 35)) await remove(live, user, note.id);
    const expected = await feedSince(live, user, cursor);
    // 60 notes, each once: the 15 deleted as tombstones, the rest as they are now.
    expect(expected).toHaveLength(60);

    // The header wins over the `since` the URL still carries, as EventSource sends them.
    const end = changeListEnvelope.parse((await live.call("/notes-changes", { token: user.accessToken })).body);
    const { stream: again } = await openReady(live, user, { lastEventId: cursor, since: end.data.cursor });
    try {
      expect(again.changes().map(({ change }) => change)).toEqual(expected);
      const numbers = again.changes().map(({ id }) => changeNumberOf(id));
      expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
      expect(new Set(numbers).size).toBe(numbers.length);
    } finally {
      again.close();
    }
    // `since` resumes the same way.
    const { stream: bySince } = await openReady(live, user, { since: cursor });
    bySince.close();
    expect(bySince.changes().map(({ change }) => change)).toEqual(expected);
  });

  it("sends every change of 10 concurrent writers once, with no gap, and none to another user", async () => {
    const user = await registerUser("stream-writers", { baseUrl: live.baseUrl });
    const other = await registerUser("stream-bystander", { baseUrl: live.baseUrl });
    // Logged in one after another: concurrent logins of one email count as failures until each is checked.
    const writers: RegisteredUser[] = [];
    for (let i = 0; i < 10; i++) writers.push(await secondSession(live, user));
    const { stream, cursor } = await openReady(live, user);
    const { stream: bystander } = await openReady(live, other);
    try {
      const start = changeNumberOf(cursor);
      await Promise.all(writers.map(async (writer, w) => {
        for (let i = 0; i < 5; i++) await create(live, writer, `writer ${w} note ${i}`);
      }));
      await stream.waitFor(() => stream.changes().length >= 50, 15_000);
      const numbers = stream.changes().map(({ id }) => changeNumberOf(id));
      expect(numbers).toEqual(Array.from({ length: 50 }, (_, i) => start + i + 1));
      const titles = stream.changes().map(({ change }) => (change as Note).title).sort();
      expect(new Set(titles).size).toBe(50);
      // The bystander's stream stays open and carries none of it.
      expect(bystander.isEnded()).toBe(false);
      expect(bystander.changes()).toEqual([]);
      // Nor does a cursor of one account open the other's stream.
      const foreign = await openStream(live.baseUrl, other.accessToken, { since: cursor });
      expect(foreign.status).toBe(400);
      expect(JSON.parse(foreign.text).code).toBe("invalid_cursor");
    } finally {
      stream.close();
      bystander.close();
    }
  });

  it("sends a keep-alive comment at least every 15 s while nothing changes", async () => {
    const user = await registerUser("stream-idle", { baseUrl: live.baseUrl });
    const { stream } = await openReady(live, user);
    try {
      const opened = performance.now();
      const comment = await stream.waitFor((message) => message.kind === "comment", 17_000);
      expect(comment.at - opened).toBeLessThan(16_000);
      expect(stream.isEnded()).toBe(false);
    } finally {
      stream.close();
    }
  });

  it("ends the stream of a session that signs out within 30 s, and its reconnect is 401", async () => {
    const user = await registerUser("stream-signout", { baseUrl: live.baseUrl });
    const { stream, cursor } = await openReady(live, user);
    const signedOut = await live.call("/auth/logout", { token: user.accessToken, body: {} });
    expect(signedOut.status, signedOut.text).toBe(200);
    const at = performance.now();
    await Promise.race([
      stream.ended,
      new Promise((_, reject) => setTimeout(() => reject(new Error("still open after 30 s")), 30_000)),
    ]);
    expect(performance.now() - at).toBeLessThan(30_000);
    const reconnect = await openStream(live.baseUrl, user.accessToken, { lastEventId: cursor });
    expect(reconnect.status).toBe(401);
  });

  it("refuses a malformed cursor, an unknown parameter, a missing token and another method", async () => {
    const user = await registerUser("stream-refusals", { baseUrl: live.baseUrl });
    const bySince = await live.call("/notes-stream?since=not-a-cursor", { token: user.accessToken });
    expect(expectNotesError(bySince, 400)).toMatch(/since/);
    expect((bySince.body as { code: string }).code).toBe("invalid_cursor");
    const byHeader = await live.call("/notes-stream", {
      token: user.accessToken,
      headers: { "Last-Event-ID": "c1.nonsense" },
    });
    expect(expectNotesError(byHeader, 400)).toMatch(/Last-Event-ID/);
    expectNotesError(await live.call("/notes-stream?limit=5", { token: user.accessToken }), 400);
    expectNotesError(await live.call("/notes-stream"), 401);
    expectNotesError(await live.call("/notes-stream", { token: user.accessToken, method: "POST", body: {} }), 405);
    const preflight = await live.call("/notes-stream", { method: "OPTIONS" });
    expect(preflight.headers.get("access-control-allow-headers")).toMatch(/last-event-id/);
  });
});

/** The stack's established TCP connections other than those of its own server port: its database connections. */
function databaseConnectionsOf(stack: ScratchStack): number {
  const serverPort = new URL(stack.baseUrl).port;
  const lines = execFileSync("ss", ["-Htnp", "state", "established"], { encoding: "utf8" }).split("\n");
  return lines.filter((line) => line.includes(`pid=${stack.pid},`))
    .filter((line) => !line.split(/\s+/).some((field) => field.endsWith(`:${serverPort}`)))
    .length;
}

/**
 * The changes a stream's client takes: what the stream sends, or, when it ends with a reconnect hint instead (its
 * read waited past the request's database budget, as 200 reads at once can on a busy machine), what a new stream
 * sends from the last event the client took, as EventSource resumes.
 */
async function changesTaken(
  stream: OpenStream,
  user: RegisteredUser,
): Promise<{ changes: { id: string; change: unknown }[]; resumed: boolean }> {
  const first = await stream.waitFor((message) => isEvent("change")(message) || message.kind === "retry", 30_000);
  if (first.kind !== "retry") return { changes: stream.changes(), resumed: false };
  await stream.ended;
  const lastEventId = stream.messages.findLast((message) => message.kind === "event")?.id;
  const resumed = await openStream(live.baseUrl, user.accessToken, { lastEventId });
  try {
    await resumed.waitFor(isEvent("change"), 30_000);
    return { changes: resumed.changes(), resumed: true };
  } finally {
    resumed.close();
  }
}

describe("GET /notes-stream, 200 at once", () => {
  it(
    "holds no more database connections than the pool's maximum plus one, and every stream's client gets the change",
    async () => {
      // 20 accounts with the 10 streams each may have open (STREAM_MAX_PER_USER).
      const users: RegisteredUser[] = [];
      for (let i = 0; i < 20; i++) users.push(await registerUser(`stream-fanout-${i}`, { baseUrl: live.baseUrl }));
      const streams = new Map<RegisteredUser, OpenStream[]>();
      try {
        for (const user of users) {
          streams.set(
            user,
            await Promise.all(Array.from({ length: 10 }, () => openStream(live.baseUrl, user.accessToken))),
          );
        }
        const all = [...streams.values()].flat();
        expect(all).toHaveLength(200);
        await Promise.all(all.map((stream) => stream.waitFor(isEvent("ready"), 30_000)));
        const notes = await Promise.all(users.map((user) => create(live, user, `to ${user.email}'s streams`)));
        const taken = await Promise.all(
          users.map((user) => Promise.all((streams.get(user) ?? []).map((stream) => changesTaken(stream, user)))),
        );
        users.forEach((_, i) => {
          for (const { changes } of taken[i]) {
            expect(changes.map(({ change }) => (change as Note).id)).toEqual([notes[i].id]);
          }
        });
        // Only reads that waited past the budget end streams: none failed otherwise, and the first never wait so long.
        expect(taken.flat().filter(({ resumed }) => resumed).length).toBeLessThan(all.length);
        expect(readFileSync(live.logFile, "utf8")).not.toContain("change stream read failed");
        // DB_POOL_MAX's default, 5, and the notice connection.
        expect(databaseConnectionsOf(live)).toBeLessThanOrEqual(5 + 1);
        expect(databaseConnectionsOf(live)).toBeGreaterThan(0);
      } finally {
        for (const stream of [...streams.values()].flat()) stream.close();
      }
    },
    90_000,
  );

  it("refuses an account's stream past STREAM_MAX_PER_USER with 429, and only that account's", async () => {
    const user = await registerUser("stream-cap", { baseUrl: live.baseUrl });
    const other = await registerUser("stream-cap-other", { baseUrl: live.baseUrl });
    const open = await Promise.all(Array.from({ length: 10 }, () => openReady(live, user)));
    try {
      const refused = await live.call("/notes-stream", { token: user.accessToken });
      expectNotesError(refused, 429);
      expect((refused.body as { code: string }).code).toBe("rate_limited");
      expect(refused.headers.get("retry-after")).toBe("15");
      // Another account is not held back, and a stream that ends frees its place.
      const { stream: others } = await openReady(live, other);
      others.close();
      open[0].stream.close();
      const opens = async () => {
        const stream = await openStream(live.baseUrl, user.accessToken);
        stream.close();
        return stream.status;
      };
      await expect.poll(opens).toBe(200);
    } finally {
      for (const { stream } of open) stream.close();
    }
  });
});
