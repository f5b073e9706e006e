/**
 * Live updates (`GET /notes-stream`) on the stack, once for each way its
 * streams are woken: by notices on a listening connection
 * (`DATABASE_LISTEN_URL`, as in production), by the change counters' poll
 * (`STREAM_POLL_MS`), and by the notices of the embedded PGlite of a stack
 * started as `npm start` starts with no `DATABASE_URL` (write to event only:
 * its connections are not the bench database's). Each way gets a stack of its
 * own, started while no other runs, so the database connections counted are
 * that stack's.
 *
 * - From a write's answer to its `change` event on a stream that another
 *   session of the same user holds open, over sequential writes (a create, a
 *   save of that note and its delete, by turns).
 * - Many streams of one user open and ready at once: the database connections
 *   the stack holds, against the pool's maximum and its one notice connection;
 *   its resident memory before and after; and from one write's answer to the
 *   event's arrival on each of them.
 *
 * Figures only: what the stream must guarantee is tested in
 * tests/notes-stream.test.ts, with the same reader (dev/harness/event-stream.ts).
 *
 * @example
 * ```ts
 * const runs = await measureLiveUpdates(databaseUrl, env, { apiKey, ...liveUpdateSettings });
 * console.log(writeToEventTable(runs));
 * console.log(openStreamsTable(runs));
 * ```
 */
import postgres from "postgres";
import { type RunningStack, startStack } from "../dev/harness/stack.ts";
import { loadConfig } from "../supabase/functions/_shared/config/mod.ts";
import { type OpenStream, openStream, type StreamMessage } from "../dev/harness/event-stream.ts";
import { quantile } from "./load.ts";
import { markdownTable } from "./report.ts";
import { type Call, send } from "./requests.ts";

/** How many writes and streams: the bench's and the section run alone use the same. */
export const liveUpdateSettings = {
  /**
   * Sequential writes per way of waking. Polled streams wait up to a poll interval for each write and each write
   * waits a random part of one before it is sent, about two seconds a write at the default, so they get fewer.
   */
  writes: { notices: 100, poll: 30, embedded: 100 },
  /** Streams open at once. */
  streams: 200,
};

/** Streams opened at once, and ready before the next batch opens: reconnecting clients do not arrive in one instant. */
const openBatch = 50;
/** The longest wait for a `ready` or a `change`: far beyond any poll interval, so only a lost event reaches it. */
const eventTimeoutMs = 30_000;
/** The pause before each write on a stack woken by notices: enough for the last event's read to be over. */
const noticePauseMs = 20;

/** The middle, the 95th percentile and the largest of a set of latencies, in milliseconds. */
export interface Spread {
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
}

/** The stack's database connections by `application_name`: `notes-service` (its pool), `notes-service-listener`. */
export type Connections = Record<string, number>;

/** What one way of waking streams measured. */
export interface LiveUpdateRun {
  /** How the stack's streams were woken, as the tables name it. */
  wake: string;
  /** From each write's answer to its event on the other session's stream; negative when the event came first. */
  writeToEvent: Spread & { writes: number };
  /** Not measured on the embedded PGlite. */
  openStreams?: {
    streams: number;
    /** Once every stream had its `ready` event. */
    connectionsWaiting: Connections;
    /** Once one write had reached every stream, each of which read it with the feed's query. */
    connectionsAfterWrite: Connections;
    /** `DB_POOL_MAX` and the notice connection: the most the stack may hold. */
    ceiling: number;
    rssBeforeMiB: number;
    rssAfterMiB: number;
    /** From one write's answer to its event's arrival on each stream. */
    fanOut: Spread;
  };
}

/**
 * Both ways of waking streams, each on a fresh stack with `env` (which names
 * the database, `databaseUrl`, that notices are listened for on and whose
 * connections are counted).
 */
export async function measureLiveUpdates(
  databaseUrl: string,
  env: Record<string, string>,
  options: { apiKey: string; writes: { notices: number; poll: number; embedded: number }; streams: number },
): Promise<LiveUpdateRun[]> {
  const config = loadConfig(new Map(Object.entries(env)));
  const pollMs = config.streams.pollMs;
  const ways: {
    wake: string;
    env: Record<string, string>;
    writes: number;
    pauseMs: () => number;
    openStreams: boolean;
  }[] = [
    {
      wake: "notices (LISTEN/NOTIFY)",
      env: { DATABASE_LISTEN_URL: databaseUrl },
      writes: options.writes.notices,
      pauseMs: () => noticePauseMs,
      openStreams: true,
    },
    {
      wake: `counter poll every ${pollMs} ms`,
      // Set empty, so the stack does not listen on its own database.
      env: { DATABASE_LISTEN_URL: "" },
      writes: options.writes.poll,
      // A write sent right after the last event would come just after a poll every time; a random part of an interval
      // lets the writes fall anywhere in it, as users' do.
      pauseMs: () => Math.random() * pollMs,
      openStreams: true,
    },
    {
      wake: "notices on the embedded PGlite (npm start)",
      // No DATABASE_URL: the stack opens a PGlite of its own and listens on it.
      env: { DATABASE_URL: "" },
      writes: options.writes.embedded,
      pauseMs: () => noticePauseMs,
      openStreams: false,
    },
  ];
  const observer = postgres(databaseUrl, { max: 1, prepare: false, onnotice: () => {} });
  const runs: LiveUpdateRun[] = [];
  try {
    for (const way of ways) {
      // One stream outlives all of a run's writes: the planned end and the resume after it are tested, not timed.
      // One account may hold every stream, so one write's fan-out to all of them is what is timed.
      const stack = await startStack({
        env: { ...env, ...way.env, STREAM_MAX_SECONDS: "600", STREAM_MAX_PER_USER: String(options.streams) },
      });
      try {
        const writeToEvent = await timeWriteToEvent(stack.baseUrl, options.apiKey, way.writes, way.pauseMs);
        const open = way.openStreams
          ? {
            ...await holdOpenStreams(stack, observer, options.apiKey, options.streams),
            ceiling: config.dbPoolMax + 1,
          }
          : undefined;
        runs.push({ wake: way.wake, writeToEvent, openStreams: open });
      } finally {
        await stack.stop();
      }
    }
  } finally {
    await observer.end({ timeout: 5 });
  }
  return runs;
}

const isEvent = (name: string) => (message: StreamMessage) => message.kind === "event" && message.event === name;

/** A new user signed in twice, as two devices: the reader's token holds streams open, the writer's changes notes. */
async function twoDevices(baseUrl: string, apiKey: string) {
  const email = `live-updates-${Date.now()}-${crypto.randomUUID()}@example.com`;
  const password = "live updates password";
  const registered = await send(baseUrl, {
    path: "/auth/register",
    method: "POST",
    headers: { apikey: apiKey },
    body: { name: "Live Updates", email, password },
    status: 201,
  });
  const signedIn = await send(baseUrl, {
    path: "/auth/login",
    method: "POST",
    headers: { apikey: apiKey },
    body: { email, password },
    status: 200,
  });
  return {
    reader: String(registered.body.data?.accessToken),
    writer: { authorization: String(signedIn.body.data?.accessToken) },
  };
}

/** The writer's next write, by turns a create, a save of that note and its delete; resolves once it is answered. */
function writerOf(baseUrl: string, authorization: Record<string, string>): () => Promise<void> {
  let note = "";
  let turn = 0;
  const turns: (() => Call)[] = [
    () => ({ path: "/notes-create", method: "POST", headers: authorization, body: { title: "Live" }, status: 201 }),
    () => ({
      path: "/notes-save",
      method: "POST",
      headers: authorization,
      body: { id: note, content: "Saved" },
      status: 200,
    }),
    () => ({ path: `/notes-delete?id=${note}`, method: "DELETE", headers: authorization, status: 200 }),
  ];
  return async () => {
    const created = turn % turns.length === 0;
    const { body } = await send(baseUrl, turns[turn++ % turns.length]());
    if (created) note = String(body.data?.id);
  };
}

/** A stream of `token`'s holder once its `ready` event has come: it is watching for changes from then on. */
async function openReady(baseUrl: string, token: string): Promise<OpenStream> {
  const stream = await openStream(baseUrl, token);
  if (stream.status !== 200) throw new Error(`notes-stream answered ${stream.status}: ${stream.text}`);
  try {
    await stream.waitFor(isEvent("ready"), eventTimeoutMs);
  } catch (error) {
    stream.close();
    throw error;
  }
  return stream;
}

/** `writes` sequential writes of one session, each timed from its answer to its event on another's stream. */
async function timeWriteToEvent(
  baseUrl: string,
  apiKey: string,
  writes: number,
  pauseMs: () => number,
): Promise<Spread & { writes: number }> {
  const { reader, writer } = await twoDevices(baseUrl, apiKey);
  const write = writerOf(baseUrl, writer);
  const stream = await openReady(baseUrl, reader);
  const latencies: number[] = [];
  try {
    for (let index = 0; index < writes; index++) {
      await new Promise((resolve) => setTimeout(resolve, pauseMs()));
      const from = stream.messages.length;
      await write();
      const answered = performance.now();
      const event = await stream.waitFor(isEvent("change"), eventTimeoutMs, from);
      latencies.push(event.at - answered);
    }
  } finally {
    stream.close();
  }
  return { writes, ...spread(latencies) };
}

/** Opens `count` streams of one user, counts what the stack holds for them, and times one write's arrival on each. */
async function holdOpenStreams(stack: RunningStack, observer: postgres.Sql, apiKey: string, count: number) {
  const { reader, writer } = await twoDevices(stack.baseUrl, apiKey);
  const rssBeforeMiB = residentMiB(stack.pid);
  const streams: OpenStream[] = [];
  try {
    while (streams.length < count) {
      const batch = Math.min(openBatch, count - streams.length);
      streams.push(...await Promise.all(Array.from({ length: batch }, () => openReady(stack.baseUrl, reader))));
    }
    const rssAfterMiB = residentMiB(stack.pid);
    const connectionsWaiting = await connectionsOf(observer);
    const from = streams.map((stream) => stream.messages.length);
    await writerOf(stack.baseUrl, writer)();
    const answered = performance.now();
    const events = await Promise.all(
      streams.map((stream, index) => stream.waitFor(isEvent("change"), eventTimeoutMs, from[index])),
    );
    const connectionsAfterWrite = await connectionsOf(observer);
    return {
      streams: count,
      connectionsWaiting,
      connectionsAfterWrite,
      rssBeforeMiB,
      rssAfterMiB,
      fanOut: spread(events.map((event) => event.at - answered)),
    };
  } finally {
    for (const stream of streams) stream.close();
  }
}

/** The stack's connections to the database that `observer` is connected to; the observer's own is not counted. */
async function connectionsOf(observer: postgres.Sql): Promise<Connections> {
  const rows = await observer<{ name: string; count: number }[]>`
    select application_name as name, count(*)::int as count from pg_stat_activity
    where datname = current_database() and application_name like 'notes-service%'
    group by application_name`;
  return Object.fromEntries(rows.map((row) => [row.name, row.count]));
}

/** Resident memory of a process in MiB, from the kernel's own accounting. */
function residentMiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const kib = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? "0");
  return Math.round(kib / 102.4) / 10;
}

function spread(latencies: readonly number[]): Spread {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { p50Ms: quantile(sorted, 0.5), p95Ms: quantile(sorted, 0.95), maxMs: sorted.at(-1) ?? Number.NaN };
}

const total = (connections: Connections) => Object.values(connections).reduce((sum, count) => sum + count, 0);

/** A count of connections with what it is made of, e.g. `3 (pool 2, listener 1)`. */
function connectionCell(connections: Connections): string {
  const listener = connections["notes-service-listener"] ?? 0;
  return `${total(connections)} (pool ${total(connections) - listener}, listener ${listener})`;
}

/** From a write's answer to its event on another session's stream, per way of waking, as a Markdown table. */
export function writeToEventTable(runs: readonly LiveUpdateRun[]): string {
  return markdownTable(
    ["Woken by", "Writes", "p50 ms", "p95 ms", "max ms"],
    runs.map(({ wake, writeToEvent }) => [
      wake,
      String(writeToEvent.writes),
      writeToEvent.p50Ms.toFixed(1),
      writeToEvent.p95Ms.toFixed(1),
      writeToEvent.maxMs.toFixed(1),
    ]),
  );
}

/**
 * The open streams per way of waking, as a Markdown table: the stack's
 * database connections against `DB_POOL_MAX` + 1 (the most they may be,
 * however many streams wait), its memory, and one write's arrival on all.
 */
export function openStreamsTable(runs: readonly LiveUpdateRun[]): string {
  return markdownTable(
    [
      "Woken by",
      "Streams",
      "DB connections, all ready",
      "after one write reached all",
      "DB_POOL_MAX + 1",
      "Most / (DB_POOL_MAX + 1)",
      "RSS MiB before → after",
      "KiB per stream",
      "One write to all: p50 / p95 / max ms",
    ],
    runs.flatMap(({ wake, openStreams: open }) =>
      open
        ? [[
          wake,
          String(open.streams),
          connectionCell(open.connectionsWaiting),
          connectionCell(open.connectionsAfterWrite),
          String(open.ceiling),
          (Math.max(total(open.connectionsWaiting), total(open.connectionsAfterWrite)) / open.ceiling).toFixed(2),
          `${open.rssBeforeMiB.toFixed(1)} → ${open.rssAfterMiB.toFixed(1)}`,
          ((open.rssAfterMiB - open.rssBeforeMiB) * 1024 / open.streams).toFixed(0),
          [open.fanOut.p50Ms, open.fanOut.p95Ms, open.fanOut.maxMs].map((ms) => ms.toFixed(1)).join(" / "),
        ]]
        : []
    ),
  );
}
