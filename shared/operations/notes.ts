/** The signed-in user's notes and their changes, as JSON and as a stream of server-sent events. */
import {
  changeList,
  createNoteBody,
  deletedNote,
  deleteNoteQuery,
  getNoteQuery,
  idempotencyKey,
  idempotencyKeyHeader,
  limits,
  listChangesQuery,
  listNotesQuery,
  note,
  noteChange,
  noteList,
  saveNoteBody,
  streamChangesQuery,
  streamReady,
  streamReset,
} from "../../supabase/functions/_shared/contract/mod.ts";
import { always, bodyErrors, lastEventIdHeader, type OperationSpec, secondStepNeeded } from "./spec.ts";

/** Their operations, keyed by the typed client's names for them. */
export const notesOperations = {
  createNote: {
    method: "POST",
    functionName: "notes-create",
    envelope: "notes",
    summary: "Create a note",
    description: "Creates a note owned by the caller. At least one of title or content is required; an omitted " +
      "one is stored as an empty string. Status defaults to DRAFT. With an Idempotency-Key, a repeat of the same " +
      `create within ${limits.idempotencyKeyHours} hours answers the same 201 with the note the first one made and ` +
      "makes nothing (a concurrent repeat waits for the first); the same key with a different body is a 422 " +
      "(code idempotency_key_reused). Keys belong to their user." + secondStepNeeded,
    body: createNoteBody,
    headers: [{
      name: idempotencyKeyHeader,
      schema: idempotencyKey,
      description: `1 to ${limits.idempotencyKeyMaxChars} visible ASCII characters chosen by the client, one per ` +
        "note it means to create (a UUID does); send the same key when retrying that create",
    }],
    success: { status: 201, data: note },
    errors: [...bodyErrors, 401, 403, 422, ...always],
  },
  getNote: {
    method: "GET",
    functionName: "notes-get",
    envelope: "notes",
    summary: "Read one note",
    description: "One of the caller's notes as it is stored now. Another user's note, no note, or a malformed id " +
      "is a 404." + secondStepNeeded,
    query: getNoteQuery,
    success: { status: 200, data: note },
    errors: [400, 401, 403, 404, ...always],
  },
  listNotes: {
    method: "GET",
    functionName: "notes-fetch",
    envelope: "notes",
    summary: "List the caller's notes",
    description: "One page of the caller's notes, newest first (createdAt, or updatedAt with order=updatedAt, " +
      "then id, descending), with the total that match. status keeps one status; q keeps notes that contain " +
      "every word of it in the title or content, in any order, ignoring case and diacritics, each word matching " +
      `the start of a word. An unknown parameter or value, or a q over ${limits.searchMaxChars} characters, is a 400.` +
      secondStepNeeded,
    query: listNotesQuery,
    success: { status: 200, data: noteList },
    errors: [400, 401, 403, ...always],
  },
  listChanges: {
    method: "GET",
    functionName: "notes-changes",
    envelope: "notes",
    summary: "What changed in the caller's notes",
    description: "The caller's notes that changed after the cursor `since`, oldest change first, each at most " +
      "once as it is now, and each note deleted since as a tombstone {id, deleted: true}; without since, every " +
      "current note. Send data.cursor as since for what follows; hasMore says whether more follow right away. " +
      "Nothing written while a client pages is skipped. Deletions are kept NOTES_TOMBSTONE_DAYS (30 by default): " +
      "a cursor that needs an older one is a 410 with code cursor_expired (sync again without since). A cursor " +
      "that is not one this service gave the caller is a 400." + secondStepNeeded,
    query: listChangesQuery,
    success: { status: 200, data: changeList },
    errors: [400, 401, 403, 410, ...always],
  },
  streamChanges: {
    method: "GET",
    functionName: "notes-stream",
    envelope: "notes",
    summary: "Watch the caller's notes change, live",
    description: "A stream of server-sent events (text/event-stream): each change of the caller's notes after the " +
      "cursor as a change event, in order, as notes-changes shows it; then one ready event once caught up, and " +
      "from then on each change as it happens. Without a cursor it starts at the feed's current end. A cursor is " +
      "notes-changes' data.cursor or the id of any event of this stream; the Last-Event-ID header, which " +
      "EventSource sends when it reconnects, wins over since. A cursor that needs deletions no longer kept gets a " +
      "reset event and the stream ends: sync again with notes-changes without since, and do not reconnect with " +
      "that cursor. Comment lines keep the connection alive at least every 15 s. The server ends every stream " +
      "after STREAM_MAX_SECONDS (120 by default), when the access token expires, when the session ends and at " +
      "shutdown, sending a retry line before a planned end: reconnect with the last event id and nothing is lost " +
      "(a session that ended is then a 401). Errors before the stream starts are JSON, as for the other notes " +
      "operations; a cursor that is not one this service gave the caller is a 400 invalid_cursor, and an account " +
      "with STREAM_MAX_PER_USER streams open (10 by default) gets a 429 rate_limited for the next, with " +
      "Retry-After." + secondStepNeeded,
    query: streamChangesQuery,
    headers: [{
      name: lastEventIdHeader,
      schema: streamChangesQuery.shape.since.unwrap(),
      description: "the id of the last event received, to resume after it; wins over since",
    }],
    success: {
      status: 200,
      events: {
        change: {
          data: noteChange,
          description: "a note as it is now, or the tombstone {id, deleted: true} of a deleted one; the event's id " +
            "is the cursor just after this change",
        },
        ready: {
          data: streamReady,
          description: "sent once per connection, when every missed change has been sent; live from then on",
        },
        reset: {
          data: streamReset,
          description: "the cursor is older than the kept deletions; the stream ends (sync again without since)",
        },
      },
    },
    errors: [400, 401, 403, 429, ...always],
  },
  saveNote: {
    method: "POST",
    functionName: "notes-save",
    envelope: "notes",
    summary: "Update a note",
    description: "Changes the given fields of one of the caller's notes and answers with the updated note, whose " +
      "updatedAt is strictly later than before. With expectedUpdatedAt (the updatedAt last read), a note changed " +
      "since is left as it is and answered 409 with code note_conflict and the stored note. Another user's note, " +
      "or no note, is a 404. Repeating a save is safe." + secondStepNeeded,
    body: saveNoteBody,
    success: { status: 200, data: note },
    errors: [...bodyErrors, 401, 403, 404, 409, ...always],
  },
  deleteNote: {
    method: "DELETE",
    functionName: "notes-delete",
    envelope: "notes",
    summary: "Delete a note",
    description: "Deletes one of the caller's notes and answers with its id. With expectedUpdatedAt, a note " +
      "changed since is kept and answered 409 with code note_conflict and the stored note. Another user's note, " +
      "or no note, is a 404 (so is a repeated delete: the note is gone either way)." + secondStepNeeded,
    query: deleteNoteQuery,
    success: { status: 200, data: deletedNote },
    errors: [400, 401, 403, 404, 409, ...always],
  },
} as const satisfies Record<string, OperationSpec>;
