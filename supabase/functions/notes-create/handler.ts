import { getConfig } from "../_shared/config.ts";
import { requireCaller } from "../_shared/caller.ts";
import { createNoteBody } from "../_shared/contract.ts";
import { withCallerTransaction } from "../_shared/db.ts";
import { defineEndpoint } from "../_shared/endpoint.ts";
import { notesSuccess } from "../_shared/envelopes.ts";
import { insertNote } from "../_shared/queries/notes.ts";
import { readJsonBody } from "../_shared/request.ts";

/** `POST /notes-create`: creates a note owned by the caller (status `DRAFT` unless given). */
export const handler = defineEndpoint({
  name: "notes-create",
  envelope: "notes",
  methods: ["POST"],
  handle: async (req) => {
    const caller = await requireCaller(req);
    const body = await readJsonBody(req, createNoteBody, getConfig().limits.bodyTimeoutMs);
    const note = await withCallerTransaction(caller, insertNote(caller.sub, body));
    return notesSuccess(201, "Note created successfully", note);
  },
});
