import { getConfig } from "../_shared/config/mod.ts";
import { requireCaller } from "../_shared/auth/caller.ts";
import { saveNoteBody, titleOrContentRequired } from "../_shared/contract/notes.ts";
import { violatesConstraint } from "../_shared/db/errors.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { notesSuccess } from "../_shared/http/envelopes.ts";
import { BadRequestError } from "../_shared/http/errors.ts";
import { doneOrConflict, withOwnNote } from "../_shared/notes/own-note.ts";
import { updateNote } from "../_shared/queries/notes.ts";
import { readJsonBody } from "../_shared/http/request.ts";

/**
 * `POST /notes-save`: changes the given fields of one of the caller's notes;
 * with `expectedUpdatedAt`, only while the note still has that version (else 409).
 */
export const handler = defineEndpoint({
  name: "notes-save",
  envelope: "notes",
  methods: ["POST"],
  handle: async (req) => {
    const caller = await requireCaller(req);
    const body = await readJsonBody(req, saveNoteBody, getConfig().limits.bodyTimeoutMs);
    const { id, expectedUpdatedAt, ...changes } = body;
    // Only the stored note knows whether the result would be empty, so its check constraint decides.
    const outcome = await withOwnNote(
      caller,
      id,
      (noteId) => updateNote(caller.sub, noteId, changes, expectedUpdatedAt),
    )
      .catch((error) => {
        if (violatesConstraint(error, "notes_title_or_content")) {
          throw new BadRequestError(titleOrContentRequired, undefined, { cause: error });
        }
        throw error;
      });
    return notesSuccess(200, "Note saved successfully", doneOrConflict(outcome));
  },
});
