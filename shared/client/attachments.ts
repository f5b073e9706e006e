/**
 * Files in the signed-in user's notes: `client.attachments`. An upload
 * reserves the file, puts its bytes straight to the object store's signed URL
 * (never through a function; in resumable parts over 6 MiB), and completes it, so the service checks the
 * bytes before the file is listed. Downloads go through short-lived signed
 * URLs. A refusal at any step throws a {@link NotesApiError} with its status and
 * code, as every call does.
 */
import type {
  Attachment,
  AttachmentDownload,
  AttachmentType,
  AttachmentUpload,
  WholeUpload,
} from "../../supabase/functions/_shared/contract/mod.ts";
import { NotesApiError } from "../errors.ts";
import type { RequestOptions } from "./options.ts";
import type { Transport } from "./transport.ts";
import { unreachable } from "./failures.ts";
import { type StoreAnswer, uploadResumably } from "./resumable-upload.ts";

/** Options of {@link AttachmentsApi.upload}. */
export interface UploadOptions extends RequestOptions {
  /** The file's name as shown; a `File`'s own name when left out. */
  name?: string;
  /** The file's type; a `Blob`'s own type when left out. The service checks it against the bytes. */
  type?: AttachmentType;
  /** Called as the bytes go out: how many have been sent of how many. */
  onProgress?: (sent: number, total: number) => void;
}

/** Minimal XMLHttpRequest, where the platform has it: the one way a browser reports an upload's progress. */
interface ProgressRequest {
  upload: { onprogress: ((event: { loaded: number; total: number }) => void) | null };
  onload: (() => void) | null;
  onerror: (() => void) | null;
  status: number;
  responseText: string;
  open(method: string, url: string): void;
  setRequestHeader(name: string, value: string): void;
  send(body: Blob): void;
}

/** A refusal of the object store as the client's error: its own code where the store says why. */
function storeRefusal(answer: StoreAnswer, url: string): NotesApiError {
  // Storage answers 400 with its own status as a string in the body ({"statusCode": "413", ...}).
  const said = /"statusCode"\s*:\s*"(\d+)"/.exec(answer.text)?.[1];
  if (said === "413") {
    return new NotesApiError({ status: 413, code: "attachment_too_large", message: "The file is too large" });
  }
  if (said === "415") {
    return new NotesApiError({ status: 415, code: "attachment_type_mismatch", message: "The store refused the type" });
  }
  return new NotesApiError({
    status: answer.status,
    code: "unexpected_response",
    message: `The file store at ${new URL(url).origin} answered ${answer.status}`,
  });
}

/** The attachments' calls, through the client's transport. */
export class AttachmentsApi {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Attaches `data` to one of the signed-in user's notes and answers the file once the service has checked it:
   * reserve, put the bytes to the store, complete.
   */
  async upload(noteId: string, data: Blob, options: UploadOptions = {}): Promise<Attachment> {
    const name = options.name ?? ("name" in data && typeof data.name === "string" ? data.name : "file");
    const type = (options.type ?? data.type) as AttachmentType;
    const reserved = await this.#transport.call("createAttachment", {
      body: { noteId, name, type, size: data.size },
      deadline: this.#transport.deadline(options),
    }) as AttachmentUpload;
    const { upload } = reserved;
    const answer = upload.method === "tus"
      ? await uploadResumably(upload, data, { fetch: this.#transport.fetch, onProgress: options.onProgress })
        .catch((error) => Promise.reject(unreachable(new URL(upload.url), error)))
      : await this.#put(upload, data, options.onProgress);
    if (answer.status < 200 || answer.status > 299) throw storeRefusal(answer, reserved.upload.url);
    return await this.#transport.call("completeAttachment", {
      body: { id: reserved.attachment.id },
      deadline: this.#transport.deadline(options),
    }) as Attachment;
  }

  /** The files of one of the signed-in user's notes, oldest first. */
  async list(noteId: string, request: RequestOptions = {}): Promise<Attachment[]> {
    const { attachments } = await this.#transport.call("listAttachments", {
      query: { noteId },
      deadline: this.#transport.deadline(request),
    }) as { attachments: Attachment[] };
    return attachments;
  }

  /** A URL that serves the file's bytes for a few minutes (as a download, unless an image or a PDF). */
  async url(id: string, request: RequestOptions = {}): Promise<string> {
    return (await this.#read(id, request)).url;
  }

  /** The file's bytes. */
  async download(id: string, request: RequestOptions = {}): Promise<Blob> {
    const { url } = await this.#read(id, request);
    let response: Response;
    try {
      response = await this.#transport.fetch(url);
    } catch (error) {
      throw unreachable(new URL(url), error);
    }
    if (!response.ok) throw storeRefusal({ status: response.status, text: await response.text() }, url);
    return await response.blob();
  }

  /** Deletes one of the signed-in user's files; its bytes leave the store. */
  async remove(id: string, request: RequestOptions = {}): Promise<{ id: string }> {
    return await this.#transport.call("deleteAttachment", {
      query: { id },
      deadline: this.#transport.deadline(request),
    }) as { id: string };
  }

  async #read(id: string, request: RequestOptions): Promise<AttachmentDownload> {
    return await this.#transport.call("getAttachment", {
      query: { id },
      deadline: this.#transport.deadline(request),
    }) as AttachmentDownload;
  }

  /** Puts the bytes to the signed URL; through XMLHttpRequest where there is one, for its progress events. */
  async #put(
    upload: WholeUpload,
    data: Blob,
    onProgress: UploadOptions["onProgress"],
  ): Promise<StoreAnswer> {
    const Xhr = (globalThis as { XMLHttpRequest?: new () => ProgressRequest }).XMLHttpRequest;
    onProgress?.(0, data.size);
    if (!Xhr) {
      let response: Response;
      try {
        response = await this.#transport.fetch(upload.url, {
          method: upload.method,
          headers: upload.headers,
          body: data,
        });
      } catch (error) {
        throw unreachable(new URL(upload.url), error);
      }
      const text = await response.text();
      if (response.ok) onProgress?.(data.size, data.size);
      return { status: response.status, text };
    }
    return await new Promise<StoreAnswer>((resolve, reject) => {
      const request = new Xhr();
      request.open(upload.method, upload.url);
      for (const [header, value] of Object.entries(upload.headers)) request.setRequestHeader(header, value);
      request.upload.onprogress = (event) => onProgress?.(event.loaded, event.total || data.size);
      request.onload = () => resolve({ status: request.status, text: request.responseText });
      request.onerror = () => reject(unreachable(new URL(upload.url), new Error("upload failed")));
      request.send(data);
    });
  }
}
