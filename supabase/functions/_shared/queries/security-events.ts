/**
 * SQL of the security audit log (`app.security_events`): one account's
 * events, newest first, a page at a time. The rows are written by triggers
 * and by `app.record_security_event`, never here; the mail drain prunes them.
 *
 * @example
 * ```ts
 * const events = await withLiveCaller(caller, listSecurityEvents(caller.sub, { limit: 20 }));
 * ```
 */
import type { SecurityEvent, SecurityEventType } from "../contract.ts";
import type { Query, Statement } from "../db.ts";
import { uuidOrNull } from "../uuid.ts";

interface SecurityEventRow {
  id: string;
  at: Date;
  type: SecurityEventType;
  user_id: string;
  actor_id: string | null;
  address: string | null;
  user_agent: string | null;
  details: Record<string, unknown>;
}

/**
 * Up to `limit` events of account `userId` with an id below `before`, newest
 * first. A malformed id names no account, and lists nothing.
 */
export function listSecurityEvents(
  userId: string,
  page: { limit: number; before?: number },
): Query<SecurityEventRow, SecurityEvent[]> {
  return {
    text: `select id, at, type, user_id, actor_id, address, user_agent, details
           from app.security_events
           where user_id = $1::uuid
             and ($3::bigint is null or id < $3::bigint)
           order by id desc
           limit $2`,
    values: [uuidOrNull(userId), page.limit, page.before ?? null],
    read: (rows) =>
      rows.map((row) => ({
        id: row.id,
        at: row.at.toISOString(),
        type: row.type,
        userId: row.user_id,
        actorId: row.actor_id,
        address: row.address,
        userAgent: row.user_agent,
        details: row.details,
      })),
  };
}

/** Deletes up to 100 events older than `retentionDays`, oldest first; the mail drain runs it every time. */
export function pruneSecurityEvents(retentionDays: number): Statement {
  return { text: "select app.prune_security_events($1, 100)", values: [retentionDays] };
}
