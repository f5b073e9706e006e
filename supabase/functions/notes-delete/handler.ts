import { requireCaller } from "../_shared/auth/caller.ts";
import { type DeletedNote, deleteNoteQuery } from "../_shared/contract/notes.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { notesSuccess } from "../_shared/http/envelopes.ts";
import { doneOrConflict, withOwnNote } from "../_shared/notes/own-note.ts";
import { deleteNote } from "../_shared/queries/notes.ts";
import { readQuery } from "../_shared/http/request.ts";

/**
 * `DELETE /notes-delete?id=&expectedUpdatedAt=`: deletes one of the caller's
 * notes; with `expectedUpdatedAt`, only while the note still has that version (else 409).
 */
export const handler = defineEndpoint({
  name: "notes-delete",
  envelope: "notes",
  methods: ["DELETE"],
  queries: { DELETE: deleteNoteQuery },
  handle: async (req) => {
    const caller = await requireCaller(req);
    const { id, expectedUpdatedAt } = readQuery(req, deleteNoteQuery);
    const outcome = await withOwnNote(caller, id, (noteId) => deleteNote(caller.sub, noteId, expectedUpdatedAt));
    const data: DeletedNote = { id: doneOrConflict(outcome) };
    return notesSuccess(200, "Note deleted successfully", data);
  },
});
