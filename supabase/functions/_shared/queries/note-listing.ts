/**
 * SQL of a listing of the caller's notes: one page in the listing's order, filtered by status or searched, and the
 * count of every note it could show, in one round trip. As every statement of `queries/notes.ts`, it runs inside
 * `withCallerTransaction` and names the owner, so the planner can use the owner's indexes.
 *
 * @example
 * ```ts
 * const page = await withCallerTransaction(caller, listNotes(caller.sub, { limit: 10, offset: 0, order: "createdAt" }));
 * ```
 */
import type { Note, NoteOrder } from "../contract/notes.ts";
import type { Query, Statement } from "../db/transactions.ts";
import { timestamptzAsText } from "../db/timestamps.ts";
import { noteColumns, type NoteRow, toNote } from "./notes.ts";

/** One page of a listing and the count of every note it could show. */
export interface NotePage {
  notes: Note[];
  total: number;
}

/** What a listing shows: a page of the notes that match its filters, in its order. */
export interface NoteListing {
  limit: number;
  offset: number;
  order: NoteOrder;
  status?: Note["status"];
  /** Words that must all occur in the title or content. */
  q?: string;
}

// The listing reads each note through this alias; see listNotes.
const pageColumns = noteColumns.split(", ").map((column) => `note.${column}`).join(", ");

const orderColumns: Record<NoteOrder, string> = { createdAt: "created_at", updatedAt: "updated_at" };

/**
 * The `where` of a listing without a search: the owner, and the status when
 * given, as conditions on parameters numbered from `$firstParameter`.
 */
function listingConditions(owner: string, listing: NoteListing, firstParameter: number) {
  const values: unknown[] = [owner];
  const conditions = [`created_by = $${firstParameter}`];
  if (listing.status !== undefined) conditions.push(`status = $${firstParameter + values.push(listing.status) - 1}`);
  return { where: conditions.join(" and "), values };
}

/**
 * The caller's notes that match a search, as `note`, with the columns
 * `columns`: the ids of the caller's matches come from
 * `app.caller_note_matches` (its words index; see the migration for why it is
 * not an index of public.notes), and each is then read by primary key. The
 * lateral subquery's `offset 0` keeps the planner from joining the matches to
 * a scan of the owner's notes, which without statistics it may think cheaper
 * (it would read every note of the owner's status).
 */
function searchMatches(owner: string, listing: NoteListing & { q: string }, columns: string, firstParameter: number) {
  const { where, values } = listingConditions(owner, listing, firstParameter + 1);
  return {
    from: `app.caller_note_matches($${firstParameter}) as match
           cross join lateral (
             select ${columns} from public.notes where id = match and ${where} offset 0
           ) as note`,
    values: [listing.q, ...values],
  };
}

/**
 * How a listing's total is counted. Without a search, from the owner's
 * counters (`app.note_counts`, kept exact by triggers in each writing
 * transaction), so it costs the same at 10 notes or a million; a search
 * counts its matches, which the words index finds without reading the
 * owner's other notes.
 */
function listingTotal(owner: string, listing: NoteListing): Statement {
  if (listing.q !== undefined) {
    const { from, values } = searchMatches(owner, { ...listing, q: listing.q }, "id", 1);
    return { text: `select count(*)::integer as total from ${from}`, values };
  }
  if (listing.status !== undefined) {
    return { text: "select app.caller_note_count($1) as total", values: [listing.status] };
  }
  return { text: "select app.caller_note_count() as total" };
}

/**
 * The keys of a listing's page: the ids and order column of `limit` of the
 * matching notes after skipping `offset`, in the listing's order.
 *
 * Without a search they come from an index-only scan of the index that starts
 * with the owner (and the status, when filtered) and holds the order's column
 * (`notes_owner_recent_idx`, `notes_owner_edited_idx`,
 * `notes_owner_status_*_idx`), so the rows skipped by a deep offset cost no
 * heap reads and nothing is sorted. That plan must not hang on statistics:
 * before ANALYZE (a fresh import on PostgreSQL until autoanalyze, always on
 * PGlite) the planner guesses few rows per owner and would rather sort all of
 * them, so the listing plans with sorting disabled (`plannerSettings`), and the
 * ordered index is its only plan. A search sorts its few matches.
 */
function pageKeys(owner: string, listing: NoteListing, order: string) {
  const page = `order by ${order} desc, id desc limit $1 offset $2`;
  if (listing.q !== undefined) {
    const { from, values } = searchMatches(owner, { ...listing, q: listing.q }, `id, ${order}`, 3);
    return { text: `select note.id, note.${order} from ${from} ${page}`, values, plannerSettings: undefined };
  }
  const { where, values } = listingConditions(owner, listing, 3);
  return {
    text: `select id, ${order} from public.notes where ${where} ${page}`,
    values,
    plannerSettings: { enable_sort: "off" } as const,
  };
}

/**
 * The owner's notes that match the listing's filters, newest first by
 * creation or by last edit (then `id` desc), `limit` of them after skipping
 * `offset`, and the total that match, in one round trip: the page's keys
 * (`pageKeys`), then each of the at most `limit` notes fetched by primary key
 * in a nested loop that keeps their order. `npm run check:plan` checks these
 * plans, with statistics and without.
 */
export function listNotes(owner: string, listing: NoteListing): Query<NoteRow, NotePage> {
  const order = orderColumns[listing.order];
  const keys = pageKeys(owner, listing, order);
  return {
    text: `select ${pageColumns}
           from (${keys.text}) as page
           join public.notes as note on note.id = page.id
           order by page.${order} desc, page.id desc`,
    values: [listing.limit, listing.offset, ...keys.values],
    types: timestamptzAsText,
    plannerSettings: keys.plannerSettings,
    following: [listingTotal(owner, listing)],
    read: (rows, counted) => ({ notes: rows.map(toNote), total: (counted as { total: number }[])[0].total }),
  };
}
