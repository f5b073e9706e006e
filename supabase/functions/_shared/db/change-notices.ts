/**
 * Wake-ups for live update streams: which users' notes changed, and up to
 * which change number. One source per isolate serves every open stream and
 * holds at most one database connection of its own, however many streams wait:
 *
 * - With `DATABASE_LISTEN_URL`, a dedicated connection listens on the channel
 *   `note_changes`, on which every change sends `<owner> <number>` when it
 *   commits (migration `note_change_notices`). It must be a session-mode or
 *   direct connection: through a transaction-mode pooler (Supavisor on 6543,
 *   PgBouncer) `LISTEN` is accepted and nothing ever arrives.
 * - Without one, and while that connection is down, one query every
 *   `STREAM_POLL_MS` reads the change counters of the users with open streams.
 *
 * A notice is only a hint: a woken stream reads what changed with the feed's
 * own query, under its caller's row-level security, and nothing else. A stream
 * never holds a connection while it waits; it borrows a pooled one per read.
 *
 * @example
 * ```ts
 * const stop = watchChanges(caller.sub, (lastChange) => { if (lastChange > position) wake(); });
 * // ... later
 * stop();
 * ```
 */
// @ts-types="@types/pg"
import pg from "pg";
import { getConfig } from "../config/mod.ts";
import { withDatabaseDeadline } from "../http/request-deadline.ts";
import { withServiceTransaction } from "./transactions.ts";

/** Told the number of the owner's latest change, or undefined when it may have moved by any amount. */
export type ChangeNotice = (lastChange: number | undefined) => void;

/** The channel `app.next_note_change` notifies. */
const channel = "note_changes";
/** How long the notice connection stays open after the last stream has ended, for the reconnect that follows. */
const lingerMs = 10_000;
/** The wait before reconnecting a lost notice connection doubles from the first to the last. */
const reconnectDelaysMs = { first: 1_000, last: 30_000 };

const watchers = new Map<string, Set<ChangeNotice>>();

/**
 * Calls `notice` whenever `owner`'s notes may have changed, until the
 * returned function is called. Notices that arrive while a read is under way
 * are not queued: a stream reads everything after its position anyway.
 */
export function watchChanges(owner: string, notice: ChangeNotice): () => void {
  let own = watchers.get(owner);
  if (!own) watchers.set(owner, own = new Set());
  own.add(notice);
  source.start();
  return () => {
    own.delete(notice);
    if (own.size === 0 && watchers.get(owner) === own) watchers.delete(owner);
    if (watchers.size === 0) source.idle();
  };
}

function notify(owner: string, lastChange: number | undefined): void {
  for (const notice of watchers.get(owner) ?? []) notice(lastChange);
}

function notifyEveryone(): void {
  for (const owner of watchers.keys()) notify(owner, undefined);
}

/** `<owner> <number>`, as the migration sends it; anything else is ignored. */
function readNotice(payload: string | undefined): void {
  const [owner, number] = payload?.split(" ") ?? [];
  if (owner && /^\d+$/.test(number ?? "")) notify(owner, Number(number));
}

/**
 * The isolate's one source of notices: the listening connection when
 * configured and up, else the counters' poll. Started by the first watcher,
 * let go a while after the last.
 */
class NoticeSource {
  listening = false;
  #client: pg.Client | undefined;
  #reconnectDelayMs = reconnectDelaysMs.first;
  #reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  #pollTimer: ReturnType<typeof setTimeout> | undefined;
  #polling = false;
  #lingerTimer: ReturnType<typeof setTimeout> | undefined;

  start(): void {
    clearTimeout(this.#lingerTimer);
    this.#lingerTimer = undefined;
    const { databaseListenUrl } = getConfig();
    if (databaseListenUrl && !this.#client && !this.#reconnectTimer) this.#listen(databaseListenUrl);
    if (!this.listening) this.#startPolling();
  }

  /** No stream waits any more: the connection is closed after a while, the poll at once. */
  idle(): void {
    this.#stopPolling();
    clearTimeout(this.#lingerTimer);
    this.#lingerTimer = setTimeout(() => this.stop(), lingerMs);
  }

  /** Closes the connection and stops polling; the next watcher starts them again. */
  stop(): void {
    clearTimeout(this.#lingerTimer);
    clearTimeout(this.#reconnectTimer);
    this.#lingerTimer = this.#reconnectTimer = undefined;
    this.#stopPolling();
    this.#drop();
  }

  #listen(url: string): void {
    const client = new pg.Client({
      connectionString: url,
      application_name: "notes-service-listener",
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
    });
    this.#client = client;
    client.on("notification", (message) => readNotice(message.payload));
    client.on("error", (error) => this.#lost(client, error));
    client.on("end", () => this.#lost(client, new Error("the notice connection ended")));
    client.connect()
      .then(() => client.query(`listen ${channel}`))
      .then(() => {
        if (this.#client !== client) return;
        this.listening = true;
        this.#reconnectDelayMs = reconnectDelaysMs.first;
        this.#stopPolling();
        // Changes committed before the LISTEN took effect sent notices to no one: every stream looks once.
        notifyEveryone();
      })
      .catch((error) => this.#lost(client, error));
  }

  /** The connection failed or ended: poll until a new one listens. */
  #lost(client: pg.Client, error: unknown): void {
    if (this.#client !== client) return;
    console.error(JSON.stringify({ level: "warn", event: "notice connection lost", error: String(error) }));
    this.#drop();
    if (watchers.size === 0) return;
    this.#startPolling();
    const delay = this.#reconnectDelayMs;
    this.#reconnectDelayMs = Math.min(delay * 2, reconnectDelaysMs.last);
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = undefined;
      const { databaseListenUrl } = getConfig();
      if (databaseListenUrl && watchers.size > 0) this.#listen(databaseListenUrl);
    }, delay);
  }

  #drop(): void {
    const client = this.#client;
    this.#client = undefined;
    this.listening = false;
    client?.end().catch(() => {});
  }

  #startPolling(): void {
    if (this.#polling) return;
    this.#polling = true;
    this.#schedulePoll();
  }

  #stopPolling(): void {
    this.#polling = false;
    clearTimeout(this.#pollTimer);
    this.#pollTimer = undefined;
  }

  #schedulePoll(): void {
    this.#pollTimer = setTimeout(async () => {
      if (!this.#polling || watchers.size === 0) return;
      await pollCounters().catch((error) =>
        console.error(JSON.stringify({ level: "warn", event: "change counter poll failed", error: String(error) }))
      );
      if (this.#polling) this.#schedulePoll();
    }, getConfig().streams.pollMs);
  }
}

const source = new NoticeSource();

/** Reads the change counters of every watched owner in one statement, and tells each owner's streams theirs. */
async function pollCounters(): Promise<void> {
  const owners = [...watchers.keys()];
  // A deadline of its own: the poll is no request's work, whichever request's stream started it.
  const counters = await withDatabaseDeadline(() =>
    withServiceTransaction({
      text: "select user_id::text as owner, last_change::text from app.note_counts where user_id = any($1::uuid[])",
      values: [owners],
      read: (rows: { owner: string; last_change: string }[]) => rows,
    })
  );
  for (const { owner, last_change } of counters) notify(owner, Number(last_change));
}

/** Stops listening and polling at once: the isolate or the local stack is shutting down. */
export function stopChangeNotices(): void {
  source.stop();
}
