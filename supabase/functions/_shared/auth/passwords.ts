/**
 * Password hashing in the function, not in Postgres: database CPU is what
 * every request of every user shares (a small hosted instance has 2 cores),
 * so a login flood must not spend it. bcrypt (bcryptjs, pure JavaScript, so it
 * runs wherever the functions run) reads and writes the `$2a$`/`$2b$` hashes
 * pgcrypto made, so no user has to reset a password.
 *
 * An isolate admits at most `HASH_CONCURRENCY` + `HASH_QUEUE_MAX` requests
 * that prove or set a password at once (`withPasswordAdmission`), and hashes
 * for `HASH_CONCURRENCY` of them at a time; past that a request is answered
 * 503 with `Retry-After` at once, before it reads the database or spends a
 * hash, rather than queueing behind a flood until it times out. Where the
 * runtime has Web Workers (Deno: the local stack, self-hosted servers) each
 * hash runs on a worker thread (`bcrypt-worker.ts`), so hashes use the
 * machine's cores and the isolate's own thread keeps serving other requests;
 * elsewhere bcryptjs's asynchronous API runs it inline, yielding to the event
 * loop between rounds.
 *
 * @example
 * ```ts
 * const hash = await hashPassword("correct horse battery", 10);
 * const matches = await verifyPassword("correct horse battery", hash, 10); // true
 * ```
 */
import bcrypt from "bcryptjs";
import { type HashJob, runHashJob } from "./bcrypt-worker.ts";
import { getConfig } from "../config/mod.ts";
import { ServiceUnavailableError } from "../http/errors.ts";

/** Requests admitted to password work, and hashes waiting for a lane, oldest first. */
let admitted = 0;
const waiting: ((lane: Lane) => void)[] = [];

/**
 * Runs `work`, a request's whole password step (its database reads and its
 * hashing), when fewer than `HASH_CONCURRENCY` + `HASH_QUEUE_MAX` are admitted
 * already; otherwise answers 503 at once.
 */
export async function withPasswordAdmission<T>(work: () => Promise<T>): Promise<T> {
  const { hashConcurrency, hashQueueMax } = getConfig().limits;
  if (admitted >= hashConcurrency + hashQueueMax) {
    throw new ServiceUnavailableError({ message: "Too many sign-ins at once; try again shortly", retryAfter: 1 });
  }
  admitted++;
  try {
    return await work();
  } finally {
    admitted--;
  }
}

/** Where a hash runs: a worker thread, or this isolate's own thread where there are no workers. */
interface Lane {
  run(job: HashJob): Promise<string | boolean>;
}

const inlineLane: Lane = { run: runHashJob };

/**
 * A lane on a Web Worker of its own. Should the worker fail (a runtime that
 * cannot load it), its jobs, and every later one, run inline instead.
 */
function workerLane(): Lane {
  const worker = new Worker(new URL("./bcrypt-worker.ts", import.meta.url).href, { type: "module" });
  const pending = new Map<number, { job: HashJob; settle: (result: Promise<string | boolean>) => void }>();
  let nextId = 0;
  let broken = false;
  worker.onmessage = ({ data }: MessageEvent<{ id: number; result?: string | boolean; error?: string }>) => {
    const waiting = pending.get(data.id);
    pending.delete(data.id);
    waiting?.settle(
      data.error === undefined ? Promise.resolve(data.result ?? false) : Promise.reject(new Error(data.error)),
    );
  };
  worker.onerror = (event) => {
    event.preventDefault();
    broken = true;
    for (const { job, settle } of pending.values()) settle(runHashJob(job));
    pending.clear();
  };
  return {
    run(job) {
      if (broken) return runHashJob(job);
      return new Promise((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { job, settle: (result) => result.then(resolve, reject) });
        worker.postMessage({ id, job });
      });
    },
  };
}

/** One lane per concurrent hash, made on first use; workers where the runtime has them. */
let lanes: Lane[] | undefined;
const freeLanes: Lane[] = [];

function makeLanes(count: number): Lane[] {
  try {
    return Array.from({ length: count }, workerLane);
  } catch {
    return Array.from({ length: count }, () => inlineLane);
  }
}

/** Runs one job on a free lane, waiting for one when all are busy; the admission bounds how many wait. */
async function runOnLane(job: HashJob): Promise<string | boolean> {
  if (!lanes) freeLanes.push(...(lanes = makeLanes(getConfig().limits.hashConcurrency)));
  const lane = freeLanes.pop() ?? await new Promise<Lane>((resolve) => waiting.push(resolve));
  try {
    return await lane.run(job);
  } finally {
    // The lane passes straight to the next waiter, so no newcomer can take it in between.
    const next = waiting.shift();
    if (next) next(lane);
    else freeLanes.push(lane);
  }
}

/**
 * A bcrypt hash of `password` at `cost`. It is written as `$2a$`, as
 * pgcrypto writes and reads them: for passwords of at most 72 bytes `$2a$`
 * and `$2b$` are the same computation, and a `$2a$` hash stays checkable by
 * Postgres's own crypt(), should an operator need it.
 */
export async function hashPassword(password: string, cost: number): Promise<string> {
  const salt = (await bcrypt.genSalt(cost)).replace(/^\$2b\$/, "$2a$");
  return String(await runOnLane({ kind: "hash", password, salt }));
}

/** A hash of a random password at each cost, to check against when there is no account. */
const standIns = new Map<number, Promise<string>>();

function standInHash(cost: number): Promise<string> {
  let hash = standIns.get(cost);
  if (!hash) standIns.set(cost, hash = hashPassword(crypto.randomUUID(), cost));
  return hash;
}

/**
 * Whether `password` matches `hash`. Without a hash (no such account) it
 * checks against a stand-in of the configured `cost`, so the answer takes as
 * long as a wrong password's and says nothing about the account.
 */
export async function verifyPassword(password: string, hash: string | undefined, cost: number): Promise<boolean> {
  const against = hash ?? await standInHash(cost);
  const matches = await runOnLane({ kind: "compare", password, hash: against });
  return matches === true && hash !== undefined;
}
