import { requireCaller } from "../_shared/auth/caller.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { type AttachmentDownload, attachmentQuery } from "../_shared/contract/attachments.ts";
import { withCallerTransaction } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { notesSuccess } from "../_shared/http/envelopes.ts";
import { readQuery } from "../_shared/http/request.ts";
import { isUuid } from "../_shared/http/uuid.ts";
import { signedDownloadUrl, withObjectStore } from "../_shared/attachments/object-store.ts";
import { attachmentNotFound } from "../_shared/attachments/refusals.ts";
import { isShownInline } from "../_shared/attachments/sniff.ts";
import { requireObjectStore } from "../_shared/attachments/store.ts";
import { selectAttachment } from "../_shared/queries/attachments.ts";

/**
 * `GET /attachments-get?id=`: one of the caller's files and a signed URL of its bytes that lives a few minutes and
 * names this file alone. Anything but an image or a PDF is served as a download, so no stored file is ever
 * rendered as a page.
 */
export const handler = defineEndpoint({
  name: "attachments-get",
  envelope: "notes",
  methods: ["GET"],
  queries: { GET: attachmentQuery },
  handle: async (req) => {
    const caller = await requireCaller(req);
    const { id } = readQuery(req, attachmentQuery);
    const store = requireObjectStore();
    const found = isUuid(id) ? await withCallerTransaction(caller, selectAttachment(caller.sub, id)) : undefined;
    if (!found) throw attachmentNotFound();
    const seconds = getConfig().attachments.urlSeconds;
    const expiresAt = new Date(Date.now() + seconds * 1000).toISOString();
    const downloadName = isShownInline(found.attachment.type) ? undefined : found.attachment.name;
    const url = await withObjectStore(
      store,
      (reachable) => signedDownloadUrl(reachable, found.objectPath, seconds, downloadName),
    );
    const data: AttachmentDownload = { attachment: found.attachment, url, expiresAt };
    return notesSuccess(200, "Attachment fetched successfully", data);
  },
});
