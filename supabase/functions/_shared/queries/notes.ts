/**
 * SQL of `public.notes`, one statement per operation. Each runs inside
 * `withCallerTransaction`, so row-level security limits it to the caller's
 * rows. The statements also name the owner, which lets the planner use the
 * owner index directly; the policies, not these filters, are what keep one
 * user out of another's notes.
 *
 * @example
 * ```ts
 * const note = await withCallerTransaction(caller, insertNote(caller.sub, body));
 * ```
 */
import { limits } from "../contract/common.ts";
import type { CreateNoteBody, Note, NoteChanges, NoteOrder } from "../contract/notes.ts";
import type { Query, Statement } from "../db/transactions.ts";
import { isoTimestamp, timestamptzAsText } from "../db/timestamps.ts";

export interface NoteRow {
  id: string;
  created_by: string;
  title: string;
  content: string;
  status: Note["status"];
  /** Postgres's text of the `timestamptz`: the note statements read it with `timestamptzAsText`. */
  created_at: string;
  updated_at: string;
}

export const noteColumns = "id, created_by, title, content, status, created_at, updated_at";

/** The API's Note from a row of `public.notes`. */
export function toNote(row: NoteRow): Note {
  return {
    id: row.id,
    title: row.title,
    content: row.content,
    status: row.status,
    createdBy: row.created_by,
    createdAt: isoTimestamp(row.created_at),
    updatedAt: isoTimestamp(row.updated_at),
  };
}

/** Inserts a note owned by `owner`; an omitted title or content is stored as "". */
export function insertNote(owner: string, input: CreateNoteBody): Query<NoteRow, Note> {
  return {
    writesNotes: true,
    text: `insert into public.notes (created_by, title, content, status)
           values ($1, $2, $3, $4)
           returning ${noteColumns}`,
    values: [owner, input.title ?? "", input.content ?? "", input.status],
    types: timestamptzAsText,
    read: ([row]) => toNote(row),
  };
}

/** What a create with an `Idempotency-Key` did. */
export type KeyedCreateOutcome =
  | { created: Note }
  /** The key had made this note (with the same request) within the window: nothing new was made. */
  | { replayed: Note }
  /** The key had made a note with a different request. */
  | { keyReused: true };

interface KeyUseRow {
  note_id: string;
  used_by_hash: string;
  used_at: string;
  created: boolean;
}

/** How long a create's key is remembered (`app.claim_note_create_key` holds the same window). */
const createKeyWindow = `interval '${limits.idempotencyKeyHours} hours'`;

/**
 * Inserts a note owned by `owner` unless key `key` already made one within
 * the window, and records the key, in one statement (`app.create_note_once`):
 * a repeat finds the key (a concurrent repeat waits until the first commits,
 * then finds it, or takes the key if the first rolled back), and an expired
 * key is taken over. The note a repeat answers is the one first answered:
 * same id, the request's fields (its fingerprint matched), and `createdAt` =
 * `updatedAt` = when the key was used, as the note was made.
 */
export function insertNoteOnce(
  owner: string,
  input: CreateNoteBody,
  key: string,
  fingerprint: string,
): Query<KeyUseRow, KeyedCreateOutcome> {
  const title = input.title ?? "";
  const content = input.content ?? "";
  return {
    writesNotes: true,
    text: "select note_id, used_by_hash, used_at, created from app.create_note_once($1, $2, $3, $4, $5, $6)",
    values: [key, fingerprint, owner, title, content, input.status],
    types: timestamptzAsText,
    read: ([used]) => {
      // The claim found the key unexpired, and keys are pruned only an hour after they expire.
      if (!used) throw new Error("An idempotency key that was not claimed has no row");
      if (used.used_by_hash !== fingerprint) return { keyReused: true };
      const note = toNote({
        id: used.note_id,
        created_by: owner,
        title,
        content,
        status: input.status,
        created_at: used.used_at,
        updated_at: used.used_at,
      });
      return used.created ? { created: note } : { replayed: note };
    },
  };
}

/**
 * Deletes up to 100 create keys expired for an hour, oldest first (the hour
 * keeps pruning clear of a create that has just found its key unexpired). Run
 * by the mail drain, the service's one schedule (every minute on Supabase
 * Cron, every 250 ms locally), so the table holds about a day of keys.
 */
export const pruneExpiredCreateKeys: Statement = {
  text: `delete from app.note_create_keys
         where (user_id, key) in (
           select user_id, key from app.note_create_keys
           where created_at <= now() - ${createKeyWindow} - interval '1 hour'
           order by created_at
           limit 100
         )`,
};

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

/** The owner's note `id`; undefined when the caller has no such note. */
export function selectNote(owner: string, id: string): Query<NoteRow, Note | undefined> {
  return {
    text: `select ${noteColumns} from public.notes where id = $1 and created_by = $2`,
    values: [id, owner],
    types: timestamptzAsText,
    read: ([row]) => row ? toNote(row) : undefined,
  };
}

/**
 * What a versioned write did: `done` with its result, or `conflict` with the
 * note as it is stored now, whose version is not the one the client named.
 */
export type VersionedOutcome<T> = { done: T } | { conflict: Note };

/**
 * A row of `app.save_note_version` or `app.delete_note_version`: the note
 * written, or the note as stored now when its version was not the one named.
 */
interface VersionedNoteRow extends NoteRow {
  written: boolean;
}

/**
 * A versioned write's outcome from its row; undefined when the caller has no
 * such note. The check and the write are one statement, serialised on the
 * row's lock, so of concurrent writes naming one version exactly one finds it,
 * and a conflict shows the version a concurrent winner committed.
 */
function versionedOutcome<T>(
  row: VersionedNoteRow | undefined,
  done: (row: VersionedNoteRow) => T,
): VersionedOutcome<T> | undefined {
  if (!row) return undefined;
  return row.written ? { done: done(row) } : { conflict: toNote(row) };
}

/**
 * Applies `changes` to the owner's note `id`, only if its version is still
 * `expectedUpdatedAt` when that is given; undefined when the caller has no such note.
 */
export function updateNote(
  owner: string,
  id: string,
  changes: NoteChanges,
  expectedUpdatedAt?: string,
): Query<VersionedNoteRow, VersionedOutcome<Note> | undefined> {
  // null keeps the stored value.
  const values = [id, owner, changes.title ?? null, changes.content ?? null, changes.status ?? null];
  if (expectedUpdatedAt === undefined) {
    return {
      writesNotes: true,
      text: `update public.notes
             set title = coalesce($3, title),
                 content = coalesce($4, content),
                 status = coalesce($5, status)
             where id = $1 and created_by = $2
             returning ${noteColumns}, true as written`,
      values,
      types: timestamptzAsText,
      read: ([row]) => versionedOutcome(row, toNote),
    };
  }
  return {
    writesNotes: true,
    text: `select ${noteColumns}, written from app.save_note_version($1, $2, $3, $4, $5, $6)`,
    values: [...values, expectedUpdatedAt],
    types: timestamptzAsText,
    read: ([row]) => versionedOutcome(row, toNote),
  };
}

/**
 * Deletes the owner's note `id`, only if its version is still
 * `expectedUpdatedAt` when that is given, and returns its id; undefined when
 * the caller has no such note.
 */
export function deleteNote(
  owner: string,
  id: string,
  expectedUpdatedAt?: string,
): Query<Pick<VersionedNoteRow, "id" | "written"> | VersionedNoteRow, VersionedOutcome<string> | undefined> {
  if (expectedUpdatedAt === undefined) {
    return {
      writesNotes: true,
      text: "delete from public.notes where id = $1 and created_by = $2 returning id, true as written",
      values: [id, owner],
      read: ([row]) => row ? { done: row.id } : undefined,
    };
  }
  return {
    writesNotes: true,
    text: `select ${noteColumns}, written from app.delete_note_version($1, $2, $3)`,
    values: [id, owner, expectedUpdatedAt],
    types: timestamptzAsText,
    read: ([row]) => versionedOutcome(row as VersionedNoteRow | undefined, (deleted) => deleted.id),
  };
}
