/**
 * One deadline for all of a request's database work: waiting for a pooled
 * connection, connecting, and every round trip (login makes two, with a hash
 * in between). It starts when the request first reaches for the database,
 * after its body has arrived, and lasts `databaseBudgetMs`, so a database that
 * stops answering without closing its connections (a dropped route, a hung
 * server, a pooler waiting on either) costs a request at most that, and its
 * 503 goes out within the 5 seconds the service promises, with a second to
 * spare for reading the request, checking its token and writing the answer.
 *
 * The deadline lives in the request's async context, so every transaction the
 * request runs (and the work it leaves to run after its answer) sees the same
 * one without passing it along. Work outside a request (the local stack's mail
 * drain) gets a deadline of its own per transaction.
 *
 * @example
 * ```ts
 * const response = await withDatabaseDeadline(() => handle(req));
 * // in db/transactions.ts: const deadline = databaseDeadline();
 * ```
 */
import { AsyncLocalStorage } from "node:async_hooks";

/** What a request may spend on the database in all: under the 5 s bound, with a second for everything else. */
export const databaseBudgetMs = 4_000;

/** A request's deadline, set when it first reaches for the database. */
interface RequestDeadline {
  at?: number;
}

const requestDeadlines = new AsyncLocalStorage<RequestDeadline>();

/** Runs `work` (one request) with a database deadline of its own, started by its first transaction. */
export function withDatabaseDeadline<T>(work: () => Promise<T>): Promise<T> {
  return requestDeadlines.run({}, work);
}

/** When the current request's database work must be over (`performance.now()` time); outside a request, a fresh one. */
export function databaseDeadline(): number {
  const fresh = performance.now() + databaseBudgetMs;
  const request = requestDeadlines.getStore();
  if (!request) return fresh;
  request.at ??= fresh;
  return request.at;
}
