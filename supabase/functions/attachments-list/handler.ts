import { requireCaller } from "../_shared/auth/caller.ts";
import { type AttachmentList, listAttachmentsQuery } from "../_shared/contract/attachments.ts";
import { withCallerTransaction } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { notesSuccess } from "../_shared/http/envelopes.ts";
import { readQuery } from "../_shared/http/request.ts";
import { isUuid } from "../_shared/http/uuid.ts";
import { noteNotFound } from "../_shared/attachments/refusals.ts";
import { listAttachments } from "../_shared/queries/attachments.ts";

/** `GET /attachments-list?noteId=`: the ready files of one of the caller's notes, oldest first. */
export const handler = defineEndpoint({
  name: "attachments-list",
  envelope: "notes",
  methods: ["GET"],
  queries: { GET: listAttachmentsQuery },
  handle: async (req) => {
    const caller = await requireCaller(req);
    const { noteId } = readQuery(req, listAttachmentsQuery);
    const attachments = isUuid(noteId)
      ? await withCallerTransaction(caller, listAttachments(caller.sub, noteId))
      : undefined;
    if (!attachments) throw noteNotFound();
    const data: AttachmentList = { attachments };
    return notesSuccess(200, "Attachments fetched successfully", data);
  },
});
