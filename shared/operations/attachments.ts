/** Files in the signed-in user's notes: reserve, upload to the object store, complete, list, read, delete. */
import {
  attachment,
  attachmentDownload,
  attachmentList,
  attachmentQuery,
  attachmentTypes,
  attachmentUpload,
  completeAttachmentBody,
  createAttachmentBody,
  deletedAttachment,
  listAttachmentsQuery,
} from "../../supabase/functions/_shared/contract/mod.ts";
import { always, bodyErrors, type OperationSpec, secondStepNeeded } from "./spec.ts";

const ownNotesOnly = " Another user's note or file, or none, is a 404.";

/** Their operations, keyed by the typed client's names for them. */
export const attachmentOperations = {
  createAttachment: {
    method: "POST",
    functionName: "attachments-create",
    envelope: "notes",
    summary: "Reserve a file on a note",
    description: "Reserves a file on one of the caller's notes and answers a signed upload URL of the object " +
      "store (Supabase Storage) that takes its bytes for this file alone: PUT them there with the headers given, " +
      "then call attachments-complete. The declared size is checked first: over ATTACHMENT_MAX_BYTES (10 MiB) is a " +
      "413 attachment_too_large; past the account's ATTACHMENT_QUOTA_BYTES (100 MiB, pending uploads included) a " +
      "413 attachment_quota_exceeded; a 21st file on the note (pending ones included) a 409 " +
      `attachment_limit_reached. type is one of ${attachmentTypes.join(", ")}. An anonymous account gets 403 ` +
      "sign_up_required. A reservation not completed before upload.expiresAt is given up and its bytes removed." +
      ownNotesOnly + secondStepNeeded,
    body: createAttachmentBody,
    success: { status: 201, data: attachmentUpload },
    errors: [...bodyErrors, 401, 403, 404, 409, ...always],
  },
  completeAttachment: {
    method: "POST",
    functionName: "attachments-complete",
    envelope: "notes",
    summary: "Check an uploaded file and make it ready",
    description: "Reads what the store holds for a reserved file: its real size must be the declared one (more " +
      "is a 413 attachment_too_large, less a 400), and its first bytes and stored type must be the declared type " +
      "(else 415 attachment_type_mismatch); a refused file is removed and its reservation freed. Bytes not yet " +
      "uploaded are a 409 attachment_not_uploaded. A ready file is listed, counted on its note and is a change of " +
      "the note in notes-changes and notes-stream; completing it again answers it again." + ownNotesOnly +
      secondStepNeeded,
    body: completeAttachmentBody,
    success: { status: 200, data: attachment },
    errors: [...bodyErrors, 401, 403, 404, 409, ...always],
  },
  listAttachments: {
    method: "GET",
    functionName: "attachments-list",
    envelope: "notes",
    summary: "List a note's files",
    description: "The ready files of one of the caller's notes, oldest first." + ownNotesOnly + secondStepNeeded,
    query: listAttachmentsQuery,
    success: { status: 200, data: attachmentList },
    errors: [400, 401, 403, 404, ...always],
  },
  getAttachment: {
    method: "GET",
    functionName: "attachments-get",
    envelope: "notes",
    summary: "Read a file: a short-lived URL of its bytes",
    description: "One of the caller's ready files and a signed URL that serves its bytes for " +
      "ATTACHMENT_URL_SECONDS (300 by default) and names this file alone. Images and PDFs are served to be shown; " +
      "anything else with Content-Disposition: attachment, so a stored file never renders as a page." +
      ownNotesOnly + secondStepNeeded,
    query: attachmentQuery,
    success: { status: 200, data: attachmentDownload },
    errors: [400, 401, 403, 404, ...always],
  },
  deleteAttachment: {
    method: "DELETE",
    functionName: "attachments-delete",
    envelope: "notes",
    summary: "Delete a file",
    description: "Deletes one of the caller's files, ready or pending, and answers its id; its bytes are removed " +
      "from the store (retried until the store confirms), and the note's change shows in notes-changes." +
      ownNotesOnly + secondStepNeeded,
    query: attachmentQuery,
    success: { status: 200, data: deletedAttachment },
    errors: [400, 401, 403, 404, ...always],
  },
} as const satisfies Record<string, OperationSpec>;
