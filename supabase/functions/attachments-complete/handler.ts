import { requireCaller } from "../_shared/auth/caller.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { attachmentTypes, completeAttachmentBody } from "../_shared/contract/attachments.ts";
import { withNotesCallerAsService } from "../_shared/db/caller-transactions.ts";
import { afterResponse } from "../_shared/http/after-response.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { notesSuccess } from "../_shared/http/envelopes.ts";
import { BadRequestError, ConflictError, HttpError } from "../_shared/http/errors.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { isUuid } from "../_shared/http/uuid.ts";
import { readObjectHead, withObjectStore } from "../_shared/attachments/object-store.ts";
import { attachmentNotFound } from "../_shared/attachments/refusals.ts";
import { dispatchRemovals } from "../_shared/attachments/removals.ts";
import { matchesType, sniffBytes } from "../_shared/attachments/sniff.ts";
import { requireObjectStore } from "../_shared/attachments/store.ts";
import { completeAttachment, type StoredBytes } from "../_shared/queries/attachments.ts";

/**
 * `POST /attachments-complete`: checks the bytes the object store holds for one of the caller's reserved files: its
 * real size must be the one declared, and its first bytes and the type it was stored with must be the declared type.
 * Then the file is ready (listed, counted on its note, a change of the note); otherwise it is refused and its object
 * removed. Completing a ready file answers it again.
 */
export const handler = defineEndpoint({
  name: "attachments-complete",
  envelope: "notes",
  methods: ["POST"],
  handle: async (req) => {
    const caller = await requireCaller(req);
    const { id } = await readJsonBody(req, completeAttachmentBody, getConfig().limits.bodyTimeoutMs);
    const store = requireObjectStore();
    if (!isUuid(id)) throw attachmentNotFound();
    // The path is the caller's folder and the id (app.reserve_attachment): another's id names nothing here.
    const object = await withObjectStore(
      store,
      (reachable) => readObjectHead(reachable, `${caller.sub}/${id}`, sniffBytes),
    );
    const stored: StoredBytes | undefined = object && {
      size: object.size,
      matchingTypes: attachmentTypes.filter((type) =>
        object.storedType.split(";")[0].trim() === type && matchesType(object.head, type, object.size <= sniffBytes)
      ),
    };
    const completion = await withNotesCallerAsService(caller, completeAttachment(caller.sub, id, stored));
    if (!completion) throw attachmentNotFound();
    if ("notUploaded" in completion) {
      throw new ConflictError("attachment_not_uploaded", "No bytes have arrived for this attachment yet");
    }
    if ("refused" in completion) {
      afterResponse("attachment removal", () => dispatchRemovals(store));
      if (completion.refused === "type") {
        throw new HttpError("attachment_type_mismatch", `The file is not of type ${completion.attachment.type}`);
      }
      if ((stored?.size ?? 0) > completion.attachment.size) {
        throw new HttpError("attachment_too_large", "More bytes arrived than were declared");
      }
      const message = "Fewer bytes arrived than were declared";
      throw new BadRequestError(message, [{ field: "size", message }]);
    }
    return notesSuccess(200, "Attachment ready", completion.ready);
  },
});
