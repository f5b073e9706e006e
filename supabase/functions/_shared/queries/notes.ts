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
import type { CreateNoteBody, Note, NoteChanges } from "../contract/notes.ts";
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
  attachments: number;
}

export const noteColumns = "id, created_by, title, content, status, created_at, updated_at, attachments";

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
    attachments: row.attachments,
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
        attachments: 0,
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
