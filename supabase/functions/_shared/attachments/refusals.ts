/**
 * What Postgres refused in an attachment's reservation (`app.reserve_attachment`, migration 20261129000100), as
 * the answers the API documents. The rules are the database's; this only names them.
 *
 * @example
 * ```ts
 * const reserved = await withAttachmentRules(() => withCallerTransaction(caller, reserveAttachment(body)));
 * ```
 */
import { pgErrorCode } from "../db/errors.ts";
import { HttpError, NotFoundError } from "../http/errors.ts";
import { attachmentLimits } from "../contract/attachments.ts";

/** The 404 for an attachment id that names none of the caller's, whatever the reason. */
export const attachmentNotFound = () => new NotFoundError("attachment_not_found", "Attachment not found");

/** The 404 for a note id that names none of the caller's notes. */
export const noteNotFound = () => new NotFoundError("note_not_found", "Note not found");

function refusal(error: unknown): HttpError | undefined {
  const message = error instanceof Error ? error.message : "";
  switch (`${pgErrorCode(error)} ${message}`) {
    case "PT404 attachment_note_missing":
      return noteNotFound();
    case "PT413 attachment_too_large":
      return new HttpError("attachment_too_large", "The file is larger than an attachment may be");
    case "PT413 attachment_quota":
      return new HttpError("attachment_quota_exceeded", "The account's attachments would pass its quota");
    case "PT409 attachment_limit":
      return new HttpError(
        "attachment_limit_reached",
        `A note has at most ${attachmentLimits.perNote} attachments, pending uploads included`,
      );
  }
  return undefined;
}

/** Runs `work`, answering the reservation's refusals as their documented errors. */
export async function withAttachmentRules<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw refusal(error) ?? error;
  }
}
