/**
 * SQL of `public.attachments`, one statement per request. The reservation,
 * listing, reading and deletion run as the caller under row-level security
 * (`withCallerTransaction`); the completion, which the API role is not granted
 * (so no client can mark its own upload checked), runs behind the notes
 * caller check and names the caller's rows itself.
 *
 * @example
 * ```ts
 * const reserved = await withCallerTransaction(caller, reserveAttachment(body));
 * ```
 */
import type { Attachment, AttachmentType, CreateAttachmentBody } from "../contract/attachments.ts";
import type { Query } from "../db/transactions.ts";
import { isoTimestamp, timestamptzAsText } from "../db/timestamps.ts";

export interface AttachmentRow {
  id: string;
  note_id: string;
  name: string;
  content_type: AttachmentType;
  size: string;
  created_at: string;
  updated_at: string;
  object_path: string;
  expires_at: string | null;
}

const attachmentColumns = "a.id, a.note_id, a.name, a.content_type, a.size, a.created_at, a.updated_at, " +
  "a.object_path, a.expires_at";

/** The API's Attachment from a row. */
export function toAttachment(row: AttachmentRow): Attachment {
  return {
    id: row.id,
    noteId: row.note_id,
    name: row.name,
    type: row.content_type,
    size: Number(row.size),
    createdAt: isoTimestamp(row.created_at),
    updatedAt: isoTimestamp(row.updated_at),
  };
}

/** A reservation: the attachment, where its bytes go, and until when the upload may come. */
export interface Reservation {
  attachment: Attachment;
  objectPath: string;
  expiresAt: string;
}

/**
 * Reserves an attachment of the caller's note: its owner is `auth.uid()` (the API role may not name one), and the
 * insert's trigger checks the size, the quota and the note's count under the owner's locks
 * (`app.reserve_attachment`) and picks the object's path.
 */
export function reserveAttachment(file: CreateAttachmentBody): Query<AttachmentRow, Reservation> {
  return {
    writesNotes: true,
    text: `insert into public.attachments as a (note_id, name, content_type, size) values ($1, $2, $3, $4)
           returning ${attachmentColumns}`,
    values: [file.noteId, file.name, file.type, file.size],
    types: timestamptzAsText,
    read: ([row]) => ({
      attachment: toAttachment(row),
      objectPath: row.object_path,
      expiresAt: isoTimestamp(row.expires_at ?? row.created_at),
    }),
  };
}

/** What the completion found: the stored bytes accepted, refused (and the reservation released), or nothing. */
export type Completion =
  | { ready: Attachment }
  | { refused: "size" | "type"; attachment: Attachment }
  | { notUploaded: true }
  | undefined;

/** What the store holds for the attachment, as the function read it: undefined when nothing is there yet. */
export interface StoredBytes {
  size: number;
  /** Every type the first bytes may be. */
  matchingTypes: AttachmentType[];
}

interface CompletionRow extends AttachmentRow {
  state: "pending" | "ready";
  outcome: "ready" | "refused" | "waiting" | "done";
}

/**
 * Marks the owner's pending attachment `id` ready when the stored bytes are what was declared (exactly its size,
 * a type its first bytes may be); otherwise deletes it, which queues the object's removal and frees the quota.
 * Nothing stored yet changes nothing. A ready one is answered as it is.
 */
export function completeAttachment(
  owner: string,
  id: string,
  stored: StoredBytes | undefined,
): Query<CompletionRow, Completion> {
  return {
    // The owner's row first, as every note write takes it (app.require_notes_writer), so a deletion of the account
    // racing this waits or is waited for, never deadlocks.
    text: `with owner as (
             select u.id from app.users u where u.id = $2 for key share
           ), target as (
             select ${attachmentColumns}, a.state from owner, public.attachments a
             where a.id = $1 and a.created_by = owner.id for update of a
           ), verdict as (
             select target.*, case
               when target.state = 'ready' then 'done'
               when not $3 then 'waiting'
               when target.size = $4 and target.content_type = any($5::text[]) then 'ready'
               else 'refused' end as outcome
             from target
           ), readied as (
             update public.attachments a set state = 'ready', expires_at = null
             from verdict where a.id = verdict.id and verdict.outcome = 'ready'
             returning a.id, a.updated_at
           ), released as (
             delete from public.attachments a using verdict where a.id = verdict.id and verdict.outcome = 'refused'
           )
           select v.id, v.note_id, v.name, v.content_type, v.size, v.created_at,
                  coalesce(r.updated_at, v.updated_at) as updated_at, v.object_path, v.expires_at, v.state, v.outcome
           from verdict v left join readied r using (id)`,
    values: [id, owner, stored !== undefined, stored?.size ?? 0, stored?.matchingTypes ?? []],
    types: timestamptzAsText,
    read: ([row]) => {
      if (!row) return undefined;
      if (row.outcome === "waiting") return { notUploaded: true };
      if (row.outcome === "refused") {
        return { refused: Number(row.size) !== stored?.size ? "size" : "type", attachment: toAttachment(row) };
      }
      return { ready: toAttachment(row) };
    },
  };
}

/** The ready attachments of the owner's note `noteId`, oldest first; undefined when the caller has no such note. */
export function listAttachments(owner: string, noteId: string): Query<AttachmentRow, Attachment[] | undefined> {
  return {
    text: `select ${attachmentColumns}
           from public.notes n
           left join public.attachments a on a.note_id = n.id and a.created_by = n.created_by and a.state = 'ready'
           where n.id = $1 and n.created_by = $2
           order by a.created_at, a.id`,
    values: [noteId, owner],
    types: timestamptzAsText,
    read: (rows) => rows.length === 0 ? undefined : rows.filter((row) => row.id !== null).map(toAttachment),
  };
}

/** The owner's ready attachment `id` and its object's path; undefined when there is none. */
export function selectAttachment(
  owner: string,
  id: string,
): Query<AttachmentRow, { attachment: Attachment; objectPath: string } | undefined> {
  return {
    text: `select ${attachmentColumns} from public.attachments a
           where a.id = $1 and a.created_by = $2 and a.state = 'ready'`,
    values: [id, owner],
    types: timestamptzAsText,
    read: ([row]) => row ? { attachment: toAttachment(row), objectPath: row.object_path } : undefined,
  };
}

/** Deletes the owner's attachment `id`, ready or pending (its object is queued for removal); its id, or undefined. */
export function deleteAttachment(owner: string, id: string): Query<{ id: string }, string | undefined> {
  return {
    writesNotes: true,
    text: "delete from public.attachments where id = $1 and created_by = $2 returning id",
    values: [id, owner],
    read: ([row]) => row?.id,
  };
}
