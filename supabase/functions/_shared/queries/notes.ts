/**
 * SQL of `public.notes`. Every function here runs inside
 * `withCallerTransaction`, so row-level security limits each statement to the
 * caller's rows. The statements also name the owner, which lets the planner
 * use the owner index directly; the policies, not these filters, are what
 * keep one user out of another's notes.
 *
 * @example
 * ```ts
 * const note = await withCallerTransaction(caller, (tx) => insertNote(tx, caller.sub, body));
 * ```
 */
import type { CreateNoteBody, Note, SaveNoteBody } from "../contract.ts";
import type { TransactionSql } from "../db.ts";

interface NoteRow {
  id: string;
  created_by: string;
  title: string;
  content: string;
  status: Note["status"];
  created_at: Date;
  updated_at: Date;
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
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** Inserts a note owned by `owner`; an omitted title or content is stored as "". */
export async function insertNote(tx: TransactionSql, owner: string, input: CreateNoteBody): Promise<Note> {
  const [row] = await tx<NoteRow[]>`
    insert into public.notes (created_by, title, content, status)
    values (${owner}, ${input.title ?? ""}, ${input.content ?? ""}, ${input.status})
    returning ${tx.unsafe(noteColumns)}`;
  return toNote(row);
}

/** One page of a listing and the count of all the owner's notes. */
export interface NotePage {
  notes: Note[];
  total: number;
}

type PageRow = { total: number } & (NoteRow | { id: null });

/**
 * The owner's notes newest first (`created_at` desc, then `id` desc), `limit`
 * of them after skipping `offset`, with the total in the same statement: the
 * count is the outer row, so a page beyond the end still reports it.
 */
export async function listNotes(
  tx: TransactionSql,
  owner: string,
  page: { limit: number; offset: number },
): Promise<NotePage> {
  const rows = await tx<PageRow[]>`
    select counted.total, listed.*
    from (select count(*)::int as total from public.notes where created_by = ${owner}) as counted
    left join lateral (
      select ${tx.unsafe(noteColumns)}
      from public.notes
      where created_by = ${owner}
      order by created_at desc, id desc
      limit ${page.limit} offset ${page.offset}
    ) as listed on true
    order by listed.created_at desc, listed.id desc`;
  return {
    total: rows[0]?.total ?? 0,
    notes: rows.flatMap((row) => row.id === null ? [] : [toNote(row)]),
  };
}

/** The changes of `POST /notes-save`: each field given replaces the stored one. */
export type NoteChanges = Omit<SaveNoteBody, "id">;

/** Applies `changes` to the owner's note `id`; undefined when the caller has no such note. */
export async function updateNote(
  tx: TransactionSql,
  owner: string,
  id: string,
  changes: NoteChanges,
): Promise<Note | undefined> {
  // postgres.js refuses undefined parameters; null keeps the stored value.
  const [row] = await tx<NoteRow[]>`
    update public.notes
    set title = coalesce(${changes.title ?? null}, title),
        content = coalesce(${changes.content ?? null}, content),
        status = coalesce(${changes.status ?? null}, status)
    where id = ${id} and created_by = ${owner}
    returning ${tx.unsafe(noteColumns)}`;
  return row ? toNote(row) : undefined;
}

/** Deletes the owner's note `id` and returns its id; undefined when the caller has no such note. */
export async function deleteNote(tx: TransactionSql, owner: string, id: string): Promise<string | undefined> {
  const [row] = await tx<{ id: string }[]>`
    delete from public.notes where id = ${id} and created_by = ${owner} returning id`;
  return row?.id;
}
