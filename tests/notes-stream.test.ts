/**
 * `GET /notes-stream`: live updates that never lose a change. Stacks of its
 * own: one as deployed (woken by notices on its database, on a direct
 * connection behind a pooler; keep-alive every 15 s), one whose streams end
 * after 3 s and which only polls, behind PgBouncer on a pooler run, for the
 * server's close and the client's resume, and others for a single behaviour.
 */
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChangeList, Note } from "../supabase/functions/_shared/contract/mod.ts";
import type { ApiResponse, RegisteredUser } from "./support/api.ts";
import { call, registerUser } from "./support/api.ts";
import { expectSession } from "./support/auth.ts";
import { changeNumberOf, type OpenStream, openStream, type StreamMessage } from "../dev/harness/event-stream.ts";
import { changeListEnvelope, expectNotesError, noteEnvelope } from "./support/notes.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";
import { sharedStackLimits, startStack } from "../dev/harness/stack.ts";

const isEvent = (name: string) => (message: StreamMessage) => message.kind === "event" && message.event === name;

/** What these tests need of a stack: where it is, and a call to it. */
type Stack = Pick<ScratchStack, "baseUrl" | "call">;

let live: ScratchStack;
let ending: ScratchStack;

beforeAll(async () => {
  [live, ending] = await Promise.all([
    // Streams poll every 2 s (the default) while nothing listens: a change within 1 s is a notice's doing.
    startScratchStack("notes_stream", {
      behindPooler: true,
      env: { ...sharedStackLimits, BCRYPT_COST: "4" },
    }),
    startScratchStack("notes_stream_end", {
      behindPooler: true,
      poll: true,
      env: { ...sharedStackLimits, STREAM_MAX_SECONDS: "3" },
    }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([live?.stop(), ending?.stop()]);
});

/** A second device of `user`: a session of its own, from a login. */
async function secondSession(stack: Stack, user: RegisteredUser): Promise<RegisteredUser> {
  const session = expectSession(
    await stack.call("/auth/login", { body: { email: user.email, password: user.password } }),
    200,
  );
  return { ...user, accessToken: session.accessToken, refreshToken: session.refreshToken };
}

async function create(stack: Stack, user: RegisteredUser, title: string): Promise<Note> {
  const response = await stack.call("/notes-create", { token: user.accessToken, body: { title } });
  expect(response.status, response.text).toBe(201);
  return noteEnvelope.parse(response.body).data;
}

async function save(stack: Stack, user: RegisteredUser, id: string, content: string): Promise<ApiResponse> {
  const response = await stack.call("/notes-save", { token: user.accessToken, body: { id, content } });
  expect(response.status, response.text).toBe(200);
  return response;
}

async function remove(stack: Stack, user: RegisteredUser, id: string): Promise<void> {
  const response = await stack.call(`/notes-delete?id=${id}`, { token: user.accessToken, method: "DELETE" });
  expect(response.status, response.text).toBe(200);
}

/** Every change of `/notes-changes` after `since`, page by page. */
async function feedSince(stack: ScratchStack, user: RegisteredUser, since: string): Promise<unknown[]> {
  const seen: unknown[] = [];
  let cursor = since;
  for (;;) {
    const response = await stack.call(`/notes-changes?since=${cursor}`, { token: user.accessToken });
    expect(response.status, response.text).toBe(200);
    const page: ChangeList = changeListEnvelope.parse(response.body).data;
    seen.push(...page.changes);
    cursor = page.cursor;
    if (!page.hasMore) return seen;
  }
}

/** Opens a stream and waits for its `ready` event; returns the stream and the cursor it stands at. */
async function openReady(
  stack: Stack,
  user: RegisteredUser,
  from: { since?: string; lastEventId?: string } = {},
) {
  const stream = await openStream(stack.baseUrl, user.accessToken, from);
  expect(stream.status, stream.text).toBe(200);
  const ready = await stream.waitFor(isEvent("ready"), 10_000);
  return { stream, cursor: (ready as { id: string }).id };
}

/**
 * Opens a stream of a new user, makes 20 changes from another session of
 * theirs (creates, saves and a final delete: each kind wakes the stream), and
 * expects each event within 1 s of its write's answer (p95), where the poll
 * alone (every 2 s) would take about 2 s.
 */
async function expectChangesWithinASecond(stack: Stack): Promise<void> {
  const user = await registerUser("stream-latency", { baseUrl: stack.baseUrl });
  const phone = await secondSession(stack, user);
  const { stream } = await openReady(stack, user);
  try {
    const latencies: number[] = [];
    let note: Note | undefined;
    for (let i = 0; i < 20; i++) {
      const from = stream.messages.length;
      if (!note) note = await create(stack, phone, `latency ${i}`);
      else if (i < 19) await save(stack, phone, note.id, `edit ${i}`);
      else await remove(stack, phone, note.id);
      const answeredAt = performance.now();
      const event = await stream.waitFor(isEvent("change"), 10_000, from);
      latencies.push(Math.max(0, event.at - answeredAt));
    }
    latencies.sort((a, b) => a - b);
    const p95 = latencies[Math.ceil(latencies.length * 0.95) - 1];
    expect(p95, `latencies (ms): ${latencies.map(Math.round).join(", ")}`).toBeLessThan(1_000);
    expect(stream.changes().at(-1)?.change).toEqual({ id: note?.id, deleted: true });
  } finally {
    stream.close();
  }
}

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

describe("GET /notes-stream, 200 at once", () => {
  it("holds no more database connections than the pool's maximum plus one, and wakes every stream", async () => {
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
      await Promise.all(all.map((stream) => stream.waitFor(isEvent("change"), 30_000)));
      users.forEach((user, i) => {
        for (const stream of streams.get(user) ?? []) {
          expect(stream.changes().map(({ change }) => (change as Note).id)).toEqual([notes[i].id]);
        }
      });
      // DB_POOL_MAX's default, 5, and the notice connection.
      expect(databaseConnectionsOf(live)).toBeLessThanOrEqual(5 + 1);
      expect(databaseConnectionsOf(live)).toBeGreaterThan(0);
    } finally {
      for (const stream of [...streams.values()].flat()) stream.close();
    }
  }, 90_000);

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
      // And the streams still open still carry changes.
      const from = streams.map((stream) => stream.messages.length);
      await create(blip, user, "after the blips");
      await Promise.all(
        streams.filter((stream) => !stream.isEnded()).map((stream, i) =>
          stream.waitFor(isEvent("change"), 10_000, from[i])
        ),
      );
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
