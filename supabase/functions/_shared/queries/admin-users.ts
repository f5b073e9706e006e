/**
 * SQL of the admin endpoints: listing accounts and changing their status.
 * Run behind `withAdminCaller`, whose opening statement checks the caller is
 * an ADMIN now and names it as the actor of the events these changes record.
 * Nothing here reads `public.notes`: an admin sees how many notes an account
 * has (its counter), never what they say.
 *
 * @example
 * ```ts
 * const page = await withAdminCaller(caller, context, listUsers({ limit: 10, offset: 0 }));
 * ```
 */
import type { User } from "../contract/accounts.ts";
import type { ListUsersQuery, ManagedUser } from "../contract/admin.ts";
import type { Query } from "../db/transactions.ts";
import { uuidOrNull } from "../http/uuid.ts";
import { accountColumns, type AccountRow, toAccount } from "./account-rows.ts";

interface ManagedUserRow extends AccountRow {
  note_count: number;
  last_active_at: Date | null;
  total: number;
}

/** One page of accounts and how many match in all. */
export interface ManagedUserPage {
  users: ManagedUser[];
  total: number;
}

/** `text` as a LIKE pattern that matches it literally anywhere in a value. */
function containing(text: string): string {
  return `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}

/**
 * Accounts whose email or name contains `query` (case-insensitively) and
 * whose status is `status`, newest first, with the count of all that match,
 * in one statement. A page past the end still carries the count.
 */
export function listUsers(filter: ListUsersQuery): Query<Partial<ManagedUserRow> & { total: number }, ManagedUserPage> {
  return {
    text: `with matching as (
             select ${accountColumns} from app.users
             where ($1::text is null or email ilike $1 or name ilike $1)
               and ($2::text is null or status = $2)
           ), counted as (
             select count(*)::integer as total from matching
           )
           select counted.total, page.*
           from counted
           left join lateral (
             select m.*, coalesce(c.notes, 0) as note_count,
                    (select max(s.refreshed_at) from app.sessions s where s.user_id = m.id) as last_active_at
             from matching m
             left join app.note_counts c on c.user_id = m.id
             order by m.created_at desc, m.id desc
             limit $3 offset $4
           ) page on true`,
    values: [filter.query ? containing(filter.query) : null, filter.status ?? null, filter.limit, filter.offset],
    read: (rows) => ({
      total: rows[0]?.total ?? 0,
      users: rows.filter((row): row is ManagedUserRow => row.id !== null && row.id !== undefined).map((row) => ({
        ...toAccount(row).user,
        noteCount: row.note_count,
        lastActiveAt: row.last_active_at?.toISOString() ?? null,
      })),
    }),
  };
}

/** What setting an account's status did. */
export type StatusChange =
  | { kind: "own-account" }
  | { kind: "unknown-user" }
  | { kind: "admin-account" }
  | { kind: "updated"; user: User };

/**
 * Sets account `id`'s status (`app.set_user_status`), unless it is the acting
 * admin's own (a lone admin who suspended itself would leave nobody to lift
 * it), the suspension of an ADMIN (only an operator takes the role away), or
 * no account has that id (a malformed one included). Suspending ends every
 * session of the account in this same statement.
 */
export function setUserStatus(
  input: { id: string; status: User["status"] },
): Query<Partial<AccountRow> & { outcome: StatusChange["kind"] }, StatusChange> {
  return {
    text: "select * from app.set_user_status($1::uuid, $2)",
    values: [uuidOrNull(input.id), input.status],
    read: ([row]) =>
      row.outcome === "updated" ? { kind: "updated", user: toAccount(row as AccountRow).user } : { kind: row.outcome },
  };
}
