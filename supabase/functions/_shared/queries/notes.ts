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
import type { CreateNoteBody, Note, SaveNoteBody } from "../contract.ts";
import type { Query } from "../db.ts";
import { isoTimestamp, timestamptzAsText } from "../timestamps.ts";

interface NoteRow {
  id: string;
  created_by: string;
  title: string;
  content: string;
  status: Note["status"];
  /** Postgres's text of the `timestamptz`: the note statements read it with `timestamptzAsText`. */
  created_at: string;
  updated_at: string;
}

const noteColumns = "id, created_by, title, content, status, created_at, updated_at";

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
    text: `insert into public.notes (created_by, title, content, status)
           values ($1, $2, $3, $4)
           returning ${noteColumns}`,
    values: [owner, input.title ?? "", input.content ?? "", input.status],
    types: timestamptzAsText,
    read: ([row]) => toNote(row),
  };
}

/** One page of a listing and the count of all the owner's notes. */
export interface NotePage {
  notes: Note[];
  total: number;
}

// The listing reads each note through this alias; see listNotes.
const pageColumns = noteColumns.split(", ").map((column) => `note.${column}`).join(", ");

/**
 * The owner's notes newest first (`created_at` desc, then `id` desc), `limit`
 * of them after skipping `offset`, and the total, in one round trip.
 *
 * The page's keys come from an index-only scan of `notes_owner_recent_idx`,
 * so the rows skipped by a deep offset cost no heap reads; each of the at most
 * `limit` notes is then fetched by primary key in a nested loop that keeps the
 * index's order, so nothing is sorted (`npm run bench` checks this plan). The
 * total is the owner's counter (`app.caller_note_count()`, kept exact by
 * triggers), read by a second statement in the same transaction, so it costs
 * the same at 10 notes or a million and is there for a page past the end too.
 */
export function listNotes(owner: string, page: { limit: number; offset: number }): Query<NoteRow, NotePage> {
  return {
    text: `select ${pageColumns}
           from (
             select id, created_at
             from public.notes
             where created_by = $1
             order by created_at desc, id desc
             limit $2 offset $3
           ) as page
           join public.notes as note on note.id = page.id
           order by page.created_at desc, page.id desc`,
    values: [owner, page.limit, page.offset],
    types: timestamptzAsText,
    following: [{ text: "select app.caller_note_count() as total" }],
    read: (rows, counted) => ({ notes: rows.map(toNote), total: (counted as { total: number }[])[0].total }),
  };
}

/** The changes of `POST /notes-save`: each field given replaces the stored one. */
export type NoteChanges = Omit<SaveNoteBody, "id">;

/** Applies `changes` to the owner's note `id`; undefined when the caller has no such note. */
export function updateNote(owner: string, id: string, changes: NoteChanges): Query<NoteRow, Note | undefined> {
  return {
    // null keeps the stored value.
    text: `update public.notes
           set title = coalesce($3, title),
               content = coalesce($4, content),
               status = coalesce($5, status)
           where id = $1 and created_by = $2
           returning ${noteColumns}`,
    values: [id, owner, changes.title ?? null, changes.content ?? null, changes.status ?? null],
    types: timestamptzAsText,
    read: ([row]) => row ? toNote(row) : undefined,
  };
}

/** Deletes the owner's note `id` and returns its id; undefined when the caller has no such note. */
export function deleteNote(owner: string, id: string): Query<{ id: string }, string | undefined> {
  return {
    text: "delete from public.notes where id = $1 and created_by = $2 returning id",
    values: [id, owner],
    read: ([row]) => row?.id,
  };
}
