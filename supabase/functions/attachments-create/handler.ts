import { requireCaller } from "../_shared/auth/caller.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { type AttachmentUpload, createAttachmentBody, resumableAboveBytes } from "../_shared/contract/attachments.ts";
import { withCallerTransaction } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { notesSuccess } from "../_shared/http/envelopes.ts";
import { HttpError } from "../_shared/http/errors.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { isUuid } from "../_shared/http/uuid.ts";
import {
  resumableUploadUrl,
  type SignedUpload,
  signedUpload,
  withObjectStore,
} from "../_shared/attachments/object-store.ts";
import { noteNotFound, withAttachmentRules } from "../_shared/attachments/refusals.ts";
import { requireObjectStore } from "../_shared/attachments/store.ts";
import { deleteAttachment, reserveAttachment } from "../_shared/queries/attachments.ts";

/**
 * `POST /attachments-create`: reserves a file on one of the caller's notes, checked against the size per file, the
 * account's quota and the note's 20 in the statement that reserves it, and answers a signed URL of the object store
 * that takes the bytes for this file alone: one PUT, or for a file over 6 MiB a resumable (tus) upload in parts. The file is listed once `attachments-complete` has checked them.
 */
export const handler = defineEndpoint({
  name: "attachments-create",
  envelope: "notes",
  methods: ["POST"],
  handle: async (req) => {
    const caller = await requireCaller(req);
    const file = await readJsonBody(req, createAttachmentBody, getConfig().limits.bodyTimeoutMs);
    const store = requireObjectStore();
    // The database refuses these too; refused here, they cost no round trip.
    const { maxBytes, quotaBytes } = getConfig().attachments;
    if (file.size > maxBytes) {
      throw new HttpError("attachment_too_large", `An attachment may have at most ${maxBytes} bytes`);
    }
    if (file.size > quotaBytes) {
      throw new HttpError("attachment_quota_exceeded", "The account's attachments would pass its quota");
    }
    if (!isUuid(file.noteId)) throw noteNotFound();
    const reserved = await withAttachmentRules(() => withCallerTransaction(caller, reserveAttachment(file)));
    let signed: SignedUpload;
    try {
      signed = await withObjectStore(store, (reachable) => signedUpload(reachable, reserved.objectPath));
    } catch (error) {
      // No URL, no upload: the reservation would only hold the quota until it expires.
      await withCallerTransaction(caller, deleteAttachment(caller.sub, reserved.attachment.id)).catch(() => {});
      throw error;
    }
    const { expiresAt } = reserved;
    const upload: AttachmentUpload["upload"] = file.size > resumableAboveBytes
      ? {
        url: resumableUploadUrl(store),
        method: "tus",
        headers: { "x-signature": signed.token },
        metadata: { bucketName: store.bucket, objectName: reserved.objectPath, contentType: file.type },
        chunkSize: resumableAboveBytes,
        expiresAt,
      }
      : { url: signed.url, method: "PUT", headers: { "Content-Type": file.type }, expiresAt };
    const data: AttachmentUpload = { attachment: reserved.attachment, upload };
    return notesSuccess(201, "Attachment reserved: upload its bytes, then complete it", data);
  },
});
