import { requireCaller } from "../_shared/auth/caller.ts";
import { getNoteQuery } from "../_shared/contract/notes.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { notesSuccess } from "../_shared/http/envelopes.ts";
import { withOwnNote } from "../_shared/notes/own-note.ts";
import { selectNote } from "../_shared/queries/notes.ts";
import { readQuery } from "../_shared/http/request.ts";

/** `GET /notes-get?id=`: one of the caller's notes, as it is stored now. */
export const handler = defineEndpoint({
  name: "notes-get",
  envelope: "notes",
  methods: ["GET"],
  queries: { GET: getNoteQuery },
  handle: async (req) => {
    const caller = await requireCaller(req);
    const { id } = readQuery(req, getNoteQuery);
    const note = await withOwnNote(caller, id, (noteId) => selectNote(caller.sub, noteId));
    return notesSuccess(200, "Note fetched successfully", note);
  },
});
