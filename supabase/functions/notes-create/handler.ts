import { getConfig } from "../_shared/config/mod.ts";
import { requireCaller } from "../_shared/auth/caller.ts";
import { createNoteBody } from "../_shared/contract/notes.ts";
import { withCallerTransaction } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { notesSuccess } from "../_shared/http/envelopes.ts";
import { IdempotencyKeyReusedError } from "../_shared/http/errors.ts";
import { readIdempotencyKey, requestFingerprint } from "../_shared/notes/idempotency-key.ts";
import { insertNote, insertNoteOnce } from "../_shared/queries/notes.ts";
import { readJsonBody } from "../_shared/http/request.ts";

const created = "Note created successfully";

/**
 * `POST /notes-create`: creates a note owned by the caller (status `DRAFT`
 * unless given). With an `Idempotency-Key`, a repeat of the same create within
 * 24 hours answers the note the first one made and makes nothing.
 */
export const handler = defineEndpoint({
  name: "notes-create",
  envelope: "notes",
  methods: ["POST"],
  handle: async (req) => {
    const caller = await requireCaller(req);
    const key = readIdempotencyKey(req);
    const body = await readJsonBody(req, createNoteBody, getConfig().limits.bodyTimeoutMs);
    if (key === undefined) {
      return notesSuccess(201, created, await withCallerTransaction(caller, insertNote(caller.sub, body)));
    }
    const fingerprint = await requestFingerprint(body);
    const outcome = await withCallerTransaction(caller, insertNoteOnce(caller.sub, body, key, fingerprint));
    if ("keyReused" in outcome) throw new IdempotencyKeyReusedError();
    return notesSuccess(201, created, "created" in outcome ? outcome.created : outcome.replayed);
  },
});
