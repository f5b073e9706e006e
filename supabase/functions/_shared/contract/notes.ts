/**
 * The contract of notes: creating, listing, reading, saving and deleting
 * them, the changes feed, and the codes of their conflicts.
 */
import { z } from "zod";
import type { ErrorCode } from "./error-codes.ts";
import { integerParameter, isoTimestamp, limits, noteStatuses, pageLimit, pagination, text } from "./common.ts";

const noteStatus = z.enum(noteStatuses, {
  error: `status must be one of ${noteStatuses.join(", ")}`,
});
const title = text("title").max(limits.titleMaxChars, `title must be at most ${limits.titleMaxChars} characters`);
const content = text("content").max(
  limits.contentMaxChars,
  `content must be at most ${limits.contentMaxChars} characters`,
);

/** The rule of interface.md: a note may not have both title and content empty. */
export const titleOrContentRequired = "At least one of title or content is required";

/** Body of `POST /notes-create`. Omitted title or content is stored as "", an omitted status as DRAFT. */
export const createNoteBody = z
  .object({
    title: title.optional(),
    content: content.optional(),
    // The default is applied by the transform, not `.default()`, so JSON Schema (and the types generated
    // from it) keeps the field optional for the client instead of always present.
    status: noteStatus.optional().transform((status) => status ?? "DRAFT")
      .meta({ description: "DRAFT when omitted" }),
  })
  .refine((note) => Boolean(note.title) || Boolean(note.content), titleOrContentRequired);
export type CreateNoteBody = z.infer<typeof createNoteBody>;

/**
 * A note's version as the client last saw it: its `updatedAt`, exactly as the
 * API wrote it. A save or delete that names it changes nothing unless the
 * stored note still has that version.
 */
const expectedUpdatedAt = z
  .iso.datetime({
    precision: 3,
    error: "expectedUpdatedAt must be the note's updatedAt as the API wrote it (ISO 8601 UTC with milliseconds)",
  })
  .meta({ description: "the note's updatedAt as last read; a note changed since is not touched (409)" });

/** Body of `POST /notes-save`: the id and at least one field to change. */
export const saveNoteBody = z
  .object({
    id: text("id"),
    title: title.optional(),
    content: content.optional(),
    status: noteStatus.optional(),
    expectedUpdatedAt: expectedUpdatedAt.optional(),
  })
  .refine(
    (note) => note.title !== undefined || note.content !== undefined || note.status !== undefined,
    "At least one of title, content or status is required",
  );
export type SaveNoteBody = z.infer<typeof saveNoteBody>;
/** The changes of a save: each field given replaces the stored one. */
export type NoteChanges = Omit<SaveNoteBody, "id" | "expectedUpdatedAt">;

/** The orders of a listing, newest first either way: by creation, or by last edit. */
export const noteOrders = ["createdAt", "updatedAt"] as const;
export type NoteOrder = (typeof noteOrders)[number];

/** Query of `GET /notes-fetch`: a page, optionally filtered by status and words, in one of two orders. */
export const listNotesQuery = z.object({
  limit: pageLimit(limits.listLimitMax, limits.listLimitDefault),
  offset: integerParameter("offset", 0, Number.MAX_SAFE_INTEGER, 0),
  status: z.enum(noteStatuses, { error: `status must be one of ${noteStatuses.join(", ")}` }).optional()
    .meta({ description: "only notes of this status" }),
  q: text("q")
    .max(limits.searchMaxChars, `q must be at most ${limits.searchMaxChars} characters`)
    .transform((words) => words.trim())
    // The documented parameter is this pipe's output, so its bounds and meaning are stated on it.
    .pipe(
      z.string().min(1, "q must contain a word").meta({
        maxLength: limits.searchMaxChars,
        description: "words that must all occur in the title or content, in any order; each matches a word " +
          "starting with it, ignoring case and diacritics",
      }),
    )
    .optional(),
  order: z.enum(noteOrders, { error: `order must be one of ${noteOrders.join(", ")}` }).optional()
    .transform((order) => order ?? "createdAt")
    .meta({ description: "newest first by createdAt (when omitted) or by updatedAt; then by id" }),
});
export type ListNotesQuery = z.infer<typeof listNotesQuery>;

/** Query of `GET /notes-changes`: the changes after `since` (all current notes without it), `limit` at a time. */
export const listChangesQuery = z.object({
  since: text("since").max(200, "since must be a cursor from notes-changes").optional()
    .meta({ description: "data.cursor of an earlier answer; omit it to start with every current note" }),
  limit: integerParameter("limit", 1, limits.changesLimitMax, limits.changesLimitDefault),
});
export type ListChangesQuery = z.infer<typeof listChangesQuery>;

/** Query of `GET /notes-stream`: where to resume; the `Last-Event-ID` header, when sent, wins. */
export const streamChangesQuery = z.object({
  since: text("since").max(200, "since must be a cursor from notes-changes or notes-stream").optional()
    .meta({ description: "a cursor of notes-changes or an event id of notes-stream; omit it to start at the end" }),
});
export type StreamChangesQuery = z.infer<typeof streamChangesQuery>;

/** Query of `DELETE /notes-delete`. */
export const deleteNoteQuery = z.object({ id: text("id"), expectedUpdatedAt: expectedUpdatedAt.optional() });
export type DeleteNoteQuery = z.infer<typeof deleteNoteQuery>;

/** Query of `GET /notes-get`. */
export const getNoteQuery = z.object({ id: text("id") });
export type GetNoteQuery = z.infer<typeof getNoteQuery>;

/**
 * The `Idempotency-Key` header of `POST /notes-create` (draft-ietf-httpapi-idempotency-key-header):
 * 1 to 255 visible ASCII characters, chosen by the client, one per note it means to create.
 */
export const idempotencyKeyHeader = "Idempotency-Key";
export const idempotencyKey = z
  .string()
  .regex(
    new RegExp(`^[!-~]{1,${limits.idempotencyKeyMaxChars}}$`),
    `${idempotencyKeyHeader} must be 1 to ${limits.idempotencyKeyMaxChars} visible ASCII characters`,
  );

/** A note as every notes endpoint returns it. */
export const note = z.object({
  id: z.string(),
  title: z.string(),
  content: z.string(),
  status: z.enum(noteStatuses),
  createdBy: z.string(),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
  attachments: z.number().int().nonnegative().meta({
    description: "how many files are attached (attachments-list names them); a change of it is a change of the " +
      "note in notes-changes and notes-stream, but not of its updatedAt",
  }),
});
export type Note = z.infer<typeof note>;

/** `data` of `GET /notes-fetch`. */
export const noteList = z.object({ notes: z.array(note), pagination, userId: z.string() });
export type NoteList = z.infer<typeof noteList>;

/** A note deleted since the cursor: only its id. */
export const noteTombstone = z.object({ id: z.string(), deleted: z.literal(true) });
export type NoteTombstone = z.infer<typeof noteTombstone>;

/** One entry of the changes feed: a note as it is now, or the tombstone of a deleted one. */
export const noteChange = z.union([note, noteTombstone]);
export type NoteChange = z.infer<typeof noteChange>;

/** `data` of `GET /notes-changes`. */
export const changeList = z.object({
  changes: z.array(noteChange).meta({
    description: "oldest change first; each note at most once, as it is now, or as a tombstone when deleted",
  }),
  cursor: z.string().meta({ description: "opaque; send it as since to get what changes next" }),
  hasMore: z.boolean().meta({ description: "true when more changes follow this page right away" }),
});
export type ChangeList = z.infer<typeof changeList>;

/** `data` of the `ready` event of `GET /notes-stream`: the stream has caught up and is live from `cursor`. */
export const streamReady = z.object({
  cursor: z.string().meta({ description: "the feed's position once caught up; also the event's id" }),
});
export type StreamReady = z.infer<typeof streamReady>;

/** `data` of the `reset` event of `GET /notes-stream`: the cursor is no longer covered; the stream ends. */
export const streamReset = z.object({
  code: z.literal("cursor_expired"),
  message: z.string(),
});
export type StreamReset = z.infer<typeof streamReset>;

/** `data` of `DELETE /notes-delete`. */
export const deletedNote = z.object({ id: z.string() });
export type DeletedNote = z.infer<typeof deletedNote>;

/** The `code` of a 409 from a versioned save or delete: the note has changed since the client read it. */
export const noteConflictCode = "note_conflict" satisfies ErrorCode;
/** The `code` of a 422 from a create: its `Idempotency-Key` was used for a different note. */
export const idempotencyKeyReusedCode = "idempotency_key_reused" satisfies ErrorCode;
/** The `code` of a 410 from notes-changes: deletions after the cursor were forgotten; sync again from scratch. */
export const cursorExpiredCode = "cursor_expired" satisfies ErrorCode;
