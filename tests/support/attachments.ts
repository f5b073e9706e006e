/**
 * Attachments as a client handles them: reserve, put the bytes to the signed
 * URL the service answers, complete; and, for a test, a look at the object
 * store with the service role key of a stack started with a known one.
 */
import {
  type Attachment,
  attachment,
  attachmentDownload,
  attachmentList,
  attachmentUpload,
  notesSuccessEnvelope,
} from "../../supabase/functions/_shared/contract/mod.ts";
import type { ApiRequest, ApiResponse, RegisteredUser } from "./api.ts";

/** A stack's `call`, so the helpers serve the shared stack and scratch stacks alike. */
export type Caller = (path: string, request?: ApiRequest) => Promise<ApiResponse>;

export const uploadEnvelope = notesSuccessEnvelope(attachmentUpload);
export const attachmentEnvelope = notesSuccessEnvelope(attachment);
export const attachmentListEnvelope = notesSuccessEnvelope(attachmentList);
export const downloadEnvelope = notesSuccessEnvelope(attachmentDownload);

/** `length` bytes that start with a PNG signature. */
export function pngBytes(length = 64): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(length).map((_, index) => (index * 7) % 256);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return bytes;
}

export const utf8 = (text: string): Uint8Array<ArrayBuffer> => new Uint8Array(new TextEncoder().encode(text));

export interface UploadOptions {
  name?: string;
  type?: string;
  /** The size declared at the reservation, when not the bytes'. */
  declaredSize?: number;
}

/** What each step of an upload answered. */
export interface UploadSteps {
  reserved: ApiResponse;
  put?: Response;
  completed?: ApiResponse;
}

/** Reserves a file on `noteId`, puts `bytes` to the upload URL and completes it, stopping at the first refusal. */
export async function uploadSteps(
  call: Caller,
  user: RegisteredUser,
  noteId: string,
  bytes: Uint8Array<ArrayBuffer>,
  options: UploadOptions = {},
): Promise<UploadSteps> {
  const reserved = await call("/attachments-create", {
    token: user.accessToken,
    body: {
      noteId,
      name: options.name ?? "photo.png",
      type: options.type ?? "image/png",
      size: options.declaredSize ?? bytes.length,
    },
  });
  if (reserved.status !== 201) return { reserved };
  const { attachment: reservedFile, upload } = uploadEnvelope.parse(reserved.body).data;
  const put = await fetch(upload.url, { method: upload.method, headers: upload.headers, body: bytes });
  await put.body?.cancel();
  if (!put.ok) return { reserved, put };
  const completed = await call("/attachments-complete", { token: user.accessToken, body: { id: reservedFile.id } });
  return { reserved, put, completed };
}

/** Uploads `bytes` as a ready attachment; throws unless every step succeeded. */
export async function upload(
  call: Caller,
  user: RegisteredUser,
  noteId: string,
  bytes: Uint8Array<ArrayBuffer>,
  options: UploadOptions = {},
): Promise<Attachment> {
  const steps = await uploadSteps(call, user, noteId, bytes, options);
  if (steps.completed?.status !== 200) {
    throw new Error(`upload failed: ${steps.reserved.text} ${steps.put?.status} ${steps.completed?.text}`);
  }
  return attachmentEnvelope.parse(steps.completed.body).data;
}

/** The object store of a stack whose functions hold `serviceKey`, read as the service role. */
export function storeOf(baseUrl: string, serviceKey: string, bucket = "attachments") {
  const storage = baseUrl.replace(/\/functions\/v1$/, "/storage/v1");
  return {
    /** Whether an object is stored at `path`. */
    async holds(path: string): Promise<boolean> {
      const response = await fetch(`${storage}/object/authenticated/${bucket}/${path}`, {
        headers: { Authorization: `Bearer ${serviceKey}` },
      });
      await response.body?.cancel();
      return response.ok;
    },
  };
}
