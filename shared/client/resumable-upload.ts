/**
 * A resumable upload (tus 1.0: the core protocol and its creation extension),
 * as the object store takes files over 6 MiB: create the upload, then PATCH
 * parts of at most `chunkSize` bytes. After a part that did not arrive (a cut
 * connection, a 5xx, an offset the store disagrees with) it asks the store
 * where the upload stands (HEAD) and goes on from there, so a cut costs at
 * most the part it cut; `onProgress` reports the bytes the store holds, after
 * each part and after each such look. Fetch and `Blob.slice` only, so it runs alike in
 * browsers, Deno and Node. (tus-js-client 4 reads only Buffers and streams
 * outside a browser, and only through XMLHttpRequest in one.)
 */
import type { ResumableUpload } from "../../supabase/functions/_shared/contract/mod.ts";

/** What the store answered: its status and body. */
export interface StoreAnswer {
  status: number;
  text: string;
}

export interface ResumableUploadOptions {
  fetch: typeof fetch;
  /** Called after each part the store confirmed: how many bytes it holds of how many. */
  onProgress?: (sent: number, total: number) => void;
  /** The waits before each try again after a part that did not arrive; the upload fails past the last. */
  retryDelaysMs?: readonly number[];
}

// The first wait is a second, not none: a store still writing a cut part's bytes can answer an offset short of them,
// and a part sent from there is refused only after much of it went out.
const defaultRetryDelaysMs = [1_000, 3_000, 5_000, 10_000, 20_000];

/** `Upload-Metadata`: each key, a space, and its value in base64 of UTF-8. */
function metadataHeader(metadata: Record<string, string>): string {
  return Object.entries(metadata)
    .map(([key, value]) => `${key} ${btoa(String.fromCharCode(...new TextEncoder().encode(value)))}`)
    .join(",");
}

async function answerOf(response: Response): Promise<StoreAnswer> {
  return { status: response.status, text: await response.text() };
}

/** The answer's `Upload-Offset` when it is a whole number of bytes within the file, else undefined. */
function offsetOf(answer: Response, size: number): number | undefined {
  const offset = Number(answer.headers.get("upload-offset") ?? "");
  return answer.headers.has("upload-offset") && Number.isInteger(offset) && offset >= 0 && offset <= size
    ? offset
    : undefined;
}

/** A status worth trying again after: the store's or the way's trouble, or an offset to learn again. */
function worthRetrying(status: number): boolean {
  return status >= 500 || status === 409 || status === 423 || status === 429;
}

/**
 * Uploads `data` as `upload` says. Resolves with the store's last answer: 2xx once it holds every byte, or the
 * refusal that stopped it; rejects with the last network error when the store stayed out of reach past every retry.
 */
export async function uploadResumably(
  upload: ResumableUpload,
  data: Blob,
  options: ResumableUploadOptions,
): Promise<StoreAnswer> {
  const { fetch: send, onProgress, retryDelaysMs = defaultRetryDelaysMs } = options;
  const tus = { "Tus-Resumable": "1.0.0", ...upload.headers };
  const created = await send(upload.url, {
    method: "POST",
    headers: { ...tus, "Upload-Length": String(data.size), "Upload-Metadata": metadataHeader(upload.metadata) },
  });
  const location = created.headers.get("location");
  if (created.status !== 201 || !location) return await answerOf(created);
  await created.body?.cancel();
  const uploadUrl = new URL(location, upload.url);
  // The signature goes nowhere but the store that was named.
  if (uploadUrl.origin !== new URL(upload.url).origin) {
    return { status: 502, text: `The store sent the upload to another origin, ${uploadUrl.origin}` };
  }
  let offset = 0;
  let failures = 0;
  onProgress?.(0, data.size);
  while (offset < data.size) {
    let failure: { answer?: Response; error?: unknown };
    try {
      const answer = await send(uploadUrl, {
        method: "PATCH",
        headers: { ...tus, "Upload-Offset": String(offset), "Content-Type": "application/offset+octet-stream" },
        body: data.slice(offset, offset + upload.chunkSize),
      });
      const confirmed = offsetOf(answer, data.size);
      if (answer.status === 204 && confirmed !== undefined && confirmed > offset) {
        await answer.body?.cancel();
        offset = confirmed;
        failures = 0;
        onProgress?.(offset, data.size);
        continue;
      }
      if (answer.status === 204) {
        // A part taken that does not move the upload on is a failure too, so the loop ends whatever the store says.
        await answer.body?.cancel();
        failure = { error: new Error(`the store answered offset ${confirmed} to a part at ${offset}`) };
      } else if (!worthRetrying(answer.status)) {
        return await answerOf(answer);
      } else {
        failure = { answer };
      }
    } catch (error) {
      failure = { error };
    }
    if (failures >= retryDelaysMs.length) {
      if (failure.answer) return await answerOf(failure.answer);
      throw failure.error;
    }
    await failure.answer?.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, retryDelaysMs[failures++]));
    // Where the store stands: the bytes of a cut part that arrived are kept, and not sent again.
    try {
      const head = await send(uploadUrl, { method: "HEAD", headers: tus });
      // Gone: the last part's answer was lost after the store finished the upload and let it go (or the upload
      // expired). Completing the file tells which, as it checks what the store holds.
      if (head.status === 404 || head.status === 410) {
        await head.body?.cancel();
        return { status: 200, text: "" };
      }
      if (head.status >= 400 && head.status < 500) return await answerOf(head);
      await head.body?.cancel();
      const stands = offsetOf(head, data.size);
      if (head.ok && stands !== undefined) {
        offset = stands;
        onProgress?.(offset, data.size);
      }
    } catch {
      // Still out of reach: the next PATCH finds out, and counts as another failure.
    }
  }
  return { status: 200, text: "" };
}
