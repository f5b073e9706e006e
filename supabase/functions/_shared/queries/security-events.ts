/**
 * SQL of the security audit log (`app.security_events`): one account's
 * events, newest first, a page at a time. The rows are written by triggers
 * and by `app.record_security_event`, never here; the mail drain prunes them.
 *
 * @example
 * ```ts
 * const events = await withLiveCaller(caller, listSecurityEvents(caller.sub, { limit: 20 }, "account"));
 * ```
 */
import type { SecurityEvent, SecurityEventType } from "../contract/accounts.ts";
import type { Query, Statement } from "../db/transactions.ts";
import { uuidOrNull } from "../http/uuid.ts";

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
 * Who reads the events: the account itself, which sees that an admin acted
 * but never the admin's address or user agent, or an admin, who sees all.
 */
export type EventsReader = "account" | "admin";

/**
 * Up to `limit` events of account `userId` with an id below `before`, newest
 * first. A malformed id names no account, and lists nothing. For the account
 * itself, an event another account caused (an admin's) carries no address or
 * user agent: those were the admin's client.
 */
export function listSecurityEvents(
  userId: string,
  page: { limit: number; before?: number },
  reader: EventsReader,
): Query<SecurityEventRow, SecurityEvent[]> {
  return {
    text: `select id, at, type, user_id, actor_id,
                  case when $4::boolean or actor_id = user_id then address end as address,
                  case when $4::boolean or actor_id = user_id then user_agent end as user_agent,
                  details
           from app.security_events
           where user_id = $1::uuid
             and ($3::bigint is null or id < $3::bigint)
           order by id desc
           limit $2`,
    values: [uuidOrNull(userId), page.limit, page.before ?? null, reader === "admin"],
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
