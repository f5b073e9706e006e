/**
 * The removal dispatcher: removes from the object store the objects whose
 * attachment rows are gone (`app.attachment_removals`, queued in the deleting
 * transaction), and first gives up the pending uploads past their expiry,
 * which queues theirs. A removal the store does not confirm stays queued and
 * is retried with backoff, so an outage of the store delays a removal but
 * never loses it. Run by `attachments-dispatch` (Supabase Cron) and by the
 * local stack's loop.
 *
 * @example
 * ```ts
 * const { removed, retrying } = await dispatchRemovals(store);
 * ```
 */
import type { ObjectStore } from "../config/mod.ts";
import { runTransaction, type Statement, withServiceTransaction } from "../db/transactions.ts";
import { removeObjects } from "./object-store.ts";

/** What one run did. */
export interface RemovalOutcome {
  /** Pending uploads given up. */
  expired: number;
  removed: number;
  /** Not confirmed this time; due again after the backoff. */
  retrying: number;
}

/** Gives up to `batchSize` pending uploads past their expiry (their objects join the queue), then claims due removals. */
function claimDueRemovals(batchSize: number) {
  return {
    text: `with expired as (
             delete from public.attachments where id in (
               select id from public.attachments
               where state = 'pending' and expires_at <= now()
               order by expires_at limit $1
               for update skip locked
             ) returning object_path
           ), claimed as (
             update app.attachment_removals r
             set attempts = r.attempts + 1,
                 -- 10 s, doubling, at most an hour, so a store that is down is not called in a loop.
                 next_attempt_at = now() + least(interval '1 hour', interval '10 seconds' * power(2, least(r.attempts, 9)))
             where r.object_path in (
               select object_path from app.attachment_removals where next_attempt_at <= now()
               order by next_attempt_at limit $1
               for update skip locked
             )
             returning r.object_path
           )
           select (select count(*) from expired)::integer as expired, claimed.object_path
           from (select 1) as one left join claimed on true`,
    values: [batchSize],
    read: (rows: { expired: number; object_path: string | null }[]) => ({
      expired: rows[0]?.expired ?? 0,
      paths: rows.flatMap((row) => row.object_path === null ? [] : [row.object_path]),
    }),
  };
}

/** Forgets the removals the store confirmed, unless an upload URL may still put bytes there (`settle_at`). */
function confirmRemovals(paths: string[]): Statement {
  return {
    text: `with confirmed as (
             select object_path, settle_at from app.attachment_removals where object_path = any($1::text[])
           ), settled as (
             delete from app.attachment_removals r using confirmed c
             where r.object_path = c.object_path and c.settle_at <= now()
           )
           update app.attachment_removals r set next_attempt_at = c.settle_at, last_error = null
           from confirmed c where r.object_path = c.object_path and c.settle_at > now()`,
    values: [paths],
  };
}

function recordFailure(paths: string[], error: string): Statement {
  return {
    text: "update app.attachment_removals set last_error = $2 where object_path = any($1::text[])",
    values: [paths, error],
  };
}

/** One run: expire, claim up to `batchSize` due removals, remove them in one call to the store, record the outcome. */
export async function dispatchRemovals(store: ObjectStore, batchSize = 100): Promise<RemovalOutcome> {
  const { expired, paths } = await withServiceTransaction(claimDueRemovals(batchSize));
  if (paths.length === 0) return { expired, removed: 0, retrying: 0 };
  try {
    await removeObjects(store, paths);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    console.error(JSON.stringify({ level: "warn", event: "attachment removal failed; will retry", error: message }));
    await runTransaction([recordFailure(paths, message)]);
    return { expired, removed: 0, retrying: paths.length };
  }
  await runTransaction([confirmRemovals(paths)]);
  return { expired, removed: paths.length, retrying: 0 };
}
