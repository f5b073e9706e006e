/**
 * The contract of attachments: files in one's own notes. A file is reserved
 * (`attachments-create`, which answers a signed upload URL of the object
 * store, resumable for a file over 6 MiB), its bytes go straight to the store, and `attachments-complete`
 * checks what arrived before the file is listed. Downloads are short-lived
 * signed URLs.
 */
import { z } from "zod";
import { isoTimestamp, text } from "./common.ts";

/** The types a file may have: images, PDF, plain text and Markdown, each recognised from its first bytes. */
export const attachmentTypes = [
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
  "application/pdf",
  "text/plain",
  "text/markdown",
] as const;
export type AttachmentType = (typeof attachmentTypes)[number];

/** The limits of attachments that are not settings. */
export const attachmentLimits = {
  perNote: 20,
  nameMaxChars: 255,
} as const;

/** A file name as shown and offered for saving: no path separator, no control character. */
const attachmentName = text("name")
  .min(1, "name is required")
  .max(attachmentLimits.nameMaxChars, `name must be at most ${attachmentLimits.nameMaxChars} characters`)
  // C1 controls too (U+0080 to U+009F): Postgres's check ([[:cntrl:]] in a UTF-8 locale) refuses them as well.
  // deno-lint-ignore no-control-regex
  .refine((name) => !/[\u0000-\u001f\u007f-\u009f/\\]/.test(name), "name must not contain / \\ or control characters");

/** Body of `POST /attachments-create`: the file as the client declares it; the service checks it against the bytes. */
export const createAttachmentBody = z.object({
  noteId: text("noteId"),
  name: attachmentName,
  type: z.enum(attachmentTypes, { error: `type must be one of ${attachmentTypes.join(", ")}` }),
  size: z.number({ error: "size must be a number of bytes" }).int("size must be a whole number of bytes")
    .min(1, "size must be at least 1 byte").max(Number.MAX_SAFE_INTEGER, "size is too large"),
});
export type CreateAttachmentBody = z.infer<typeof createAttachmentBody>;

/** Body of `POST /attachments-complete`. */
export const completeAttachmentBody = z.object({ id: text("id") });

/** Query of `GET /attachments-list`. */
export const listAttachmentsQuery = z.object({ noteId: text("noteId") });

/** Query of `GET /attachments-get` and `DELETE /attachments-delete`. */
export const attachmentQuery = z.object({ id: text("id") });

/** A file as every attachments endpoint answers it. */
export const attachment = z.object({
  id: z.string(),
  noteId: z.string(),
  name: z.string(),
  type: z.enum(attachmentTypes),
  size: z.number().int().meta({ description: "bytes" }),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
});
export type Attachment = z.infer<typeof attachment>;

const uploadExpiresAt = isoTimestamp.meta({ description: "an upload not completed by then is given up and removed" });

/** A file of at most `resumableAboveBytes`: one PUT of all its bytes. */
export const wholeUpload = z.object({
  url: z.string().meta({ description: "a signed URL of the object store naming this file alone" }),
  method: z.literal("PUT"),
  headers: z.record(z.string(), z.string()).meta({ description: "send these with the bytes" }),
  expiresAt: uploadExpiresAt,
});
export type WholeUpload = z.infer<typeof wholeUpload>;

/** A larger file: a tus upload (the object store's resumable uploads), which resumes where a cut left it. */
export const resumableUpload = z.object({
  url: z.string().meta({ description: "the object store's tus endpoint for signed uploads: create the upload here" }),
  method: z.literal("tus"),
  headers: z.record(z.string(), z.string()).meta({
    description: "send these with every tus request (the signature, `x-signature`, names this file alone)",
  }),
  metadata: z.record(z.string(), z.string()).meta({
    description: "the upload's `Upload-Metadata`: `bucketName`, `objectName` and `contentType`",
  }),
  chunkSize: z.number().int().positive().meta({ description: "bytes per PATCH, at most" }),
  expiresAt: uploadExpiresAt,
});
export type ResumableUpload = z.infer<typeof resumableUpload>;

/** Files over this many bytes are uploaded resumably: Supabase Storage's part size, 6 MiB. */
export const resumableAboveBytes = 6 * 1024 * 1024;

/** `data` of `POST /attachments-create`: the reservation, and where to put the bytes. */
export const attachmentUpload = z.object({
  attachment,
  upload: z.discriminatedUnion("method", [wholeUpload, resumableUpload]),
});
export type AttachmentUpload = z.infer<typeof attachmentUpload>;

/** `data` of `GET /attachments-list`. */
export const attachmentList = z.object({ attachments: z.array(attachment) });
export type AttachmentList = z.infer<typeof attachmentList>;

/** `data` of `GET /attachments-get`: the file and a short-lived URL of its bytes. */
export const attachmentDownload = z.object({
  attachment,
  url: z.string().meta({
    description: "a signed URL that serves the bytes for a few minutes; anything but an image or a PDF is served " +
      "as a download (Content-Disposition: attachment)",
  }),
  expiresAt: isoTimestamp,
});
export type AttachmentDownload = z.infer<typeof attachmentDownload>;

/** `data` of `DELETE /attachments-delete`. */
export const deletedAttachment = z.object({ id: z.string() });
