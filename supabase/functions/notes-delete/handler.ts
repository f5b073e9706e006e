import { requireCaller } from "../_shared/caller.ts";
import { type DeletedNote, deleteNoteQuery } from "../_shared/contract.ts";
import { defineEndpoint } from "../_shared/endpoint.ts";
import { notesSuccess } from "../_shared/envelopes.ts";
import { withOwnNote } from "../_shared/own-note.ts";
import { deleteNote } from "../_shared/queries/notes.ts";
import { readQuery } from "../_shared/request.ts";

/** `DELETE /notes-delete?id=`: deletes one of the caller's notes. */
export const handler = defineEndpoint({
  name: "notes-delete",
  envelope: "notes",
  methods: ["DELETE"],
  handle: async (req) => {
    const caller = await requireCaller(req);
    const query = readQuery(req, deleteNoteQuery);
    const id = await withOwnNote(caller, query.id, (noteId) => deleteNote(caller.sub, noteId));
    const data: DeletedNote = { id };
    return notesSuccess(200, "Note deleted successfully", data);
  },
});
