import { requireCaller } from "../_shared/auth/caller.ts";
import { attachmentQuery } from "../_shared/contract/attachments.ts";
import { withCallerTransaction } from "../_shared/db/caller-transactions.ts";
import { afterResponse } from "../_shared/http/after-response.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { notesSuccess } from "../_shared/http/envelopes.ts";
import { readQuery } from "../_shared/http/request.ts";
import { isUuid } from "../_shared/http/uuid.ts";
import { attachmentNotFound } from "../_shared/attachments/refusals.ts";
import { dispatchRemovals } from "../_shared/attachments/removals.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { deleteAttachment } from "../_shared/queries/attachments.ts";

/**
 * `DELETE /attachments-delete?id=`: deletes one of the caller's files, ready or still pending. Its object is queued
 * for removal in the same transaction, and removed right after the answer where the store is reachable (else by the
 * dispatcher, once it is).
 */
export const handler = defineEndpoint({
  name: "attachments-delete",
  envelope: "notes",
  methods: ["DELETE"],
  queries: { DELETE: attachmentQuery },
  handle: async (req) => {
    const caller = await requireCaller(req);
    const { id } = readQuery(req, attachmentQuery);
    const deleted = isUuid(id) ? await withCallerTransaction(caller, deleteAttachment(caller.sub, id)) : undefined;
    if (!deleted) throw attachmentNotFound();
    const { store } = getConfig().attachments;
    if (store) afterResponse("attachment removal", () => dispatchRemovals(store));
    return notesSuccess(200, "Attachment deleted successfully", { id: deleted });
  },
});
