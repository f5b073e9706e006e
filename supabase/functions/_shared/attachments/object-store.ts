/**
 * The object store of attachments, through Supabase Storage's HTTP API with
 * the service role key: hosted Supabase Storage (a private bucket), or the
 * local stack's stand-in that serves the same endpoints from disk. Only the
 * calls the service makes: signed upload (whole or resumable) and download URLs, the first bytes
 * and size of an object, removal, and creating the bucket. Shapes as
 * supabase/storage-api answers them (`/object/upload/sign`, `/object/sign`,
 * `/object/authenticated`, `DELETE /object/{bucket}`, `POST /bucket`).
 *
 * @example
 * ```ts
 * const url = await signedDownloadUrl(store, "user/uuid", 300, "notes.txt");
 * ```
 */
import type { ObjectStore } from "../config/mod.ts";
import { ServiceUnavailableError } from "../http/errors.ts";

/** The store did not answer, or answered an error that is not about the object. */
export class ObjectStoreError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ObjectStoreError";
  }
}

/** How long one call to the store may take. */
const requestTimeoutMs = 10_000;

function objectUrl(store: ObjectStore, route: string, path: string): string {
  // Paths are the server's own (`<uuid>/<uuid>`): nothing in them needs escaping.
  return `${store.url}/object/${route}${route ? "/" : ""}${store.bucket}/${path}`;
}

async function call(store: ObjectStore, url: string, init: RequestInit = {}): Promise<Response> {
  try {
    return await fetch(url, {
      ...init,
      headers: { Authorization: `Bearer ${store.serviceKey}`, apikey: store.serviceKey, ...init.headers },
      signal: AbortSignal.timeout(requestTimeoutMs),
    });
  } catch (error) {
    throw new ObjectStoreError(error instanceof Error ? error.name : "request failed", { cause: error });
  }
}

async function json<T>(response: Response, what: string): Promise<T> {
  if (!response.ok) {
    await response.body?.cancel();
    throw new ObjectStoreError(`${what}: HTTP ${response.status}`);
  }
  return await response.json() as T;
}

/** Runs `work` against the store; a store that is down or refusing is a 503 for the caller, who may retry. */
export async function withObjectStore<T>(store: ObjectStore, work: (store: ObjectStore) => Promise<T>): Promise<T> {
  try {
    return await work(store);
  } catch (error) {
    if (error instanceof ObjectStoreError) {
      console.error(JSON.stringify({ level: "warn", event: "object store unavailable", error: error.message }));
      throw new ServiceUnavailableError({ message: "File storage is temporarily unavailable", cause: error });
    }
    throw error;
  }
}

/** A signed upload of one object: the URL that takes it whole, and its token, which also takes it in parts. */
export interface SignedUpload {
  /** PUT the bytes as the body. */
  url: string;
  /** The same signature, as `x-signature` of a resumable upload at {@link resumableUploadUrl}. */
  token: string;
}

/** A signed upload of `path`, good once, for the store's fixed time, 2 hours. */
export async function signedUpload(store: ObjectStore, path: string): Promise<SignedUpload> {
  const response = await call(store, objectUrl(store, "upload/sign", path), { method: "POST" });
  const { url } = await json<{ url: string }>(response, "signed upload URL");
  const token = new URL(url, store.url).searchParams.get("token");
  if (!token) throw new ObjectStoreError("signed upload URL: no token");
  return { url: `${store.url}${url}`, token };
}

/**
 * The store's tus endpoint for signed uploads (supabase/storage, `src/http/routes/tus/index.ts`): a file sent in
 * parts of 6 MiB at most resumes where a cut left it.
 */
export function resumableUploadUrl(store: ObjectStore): string {
  return `${store.url}/upload/resumable/sign`;
}

/**
 * A URL that serves `path` for `seconds`; with `downloadName`, as a download of that name (Storage then answers
 * `Content-Disposition: attachment`), so a browser never renders it.
 */
export async function signedDownloadUrl(
  store: ObjectStore,
  path: string,
  seconds: number,
  downloadName?: string,
): Promise<string> {
  const response = await call(store, objectUrl(store, "sign", path), {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ expiresIn: seconds }),
  });
  const { signedURL } = await json<{ signedURL: string }>(response, "signed download URL");
  const download = downloadName === undefined ? "" : `&download=${encodeURIComponent(downloadName)}`;
  return `${store.url}${signedURL}${download}`;
}

/** What the store holds at a path: its size, the type it was stored with, and its first bytes. */
export interface StoredObject {
  size: number;
  storedType: string;
  head: Uint8Array;
}

/** The object at `path` (its first `bytes` bytes only), or undefined when there is none. */
export async function readObjectHead(
  store: ObjectStore,
  path: string,
  bytes: number,
): Promise<StoredObject | undefined> {
  const response = await call(store, objectUrl(store, "authenticated", path), {
    headers: { Range: `bytes=0-${bytes - 1}` },
  });
  // Storage answers a missing object 400 (its JSON says 404) or 404; neither is about the store's health.
  if (response.status === 400 || response.status === 404) {
    await response.body?.cancel();
    return undefined;
  }
  if (response.status !== 200 && response.status !== 206) {
    await response.body?.cancel();
    throw new ObjectStoreError(`read: HTTP ${response.status}`);
  }
  const head = new Uint8Array(await response.arrayBuffer()).subarray(0, bytes);
  // 206: "bytes 0-<last>/<size>"; 200 (the whole object was shorter than the range): the body is all of it.
  const total = /\/(\d+)$/.exec(response.headers.get("content-range") ?? "")?.[1];
  const size = response.status === 206 && total !== undefined ? Number(total) : head.length;
  return { size, storedType: response.headers.get("content-type") ?? "", head };
}

/** Removes the objects at `paths`; resolves once the store confirms (a path already gone counts as removed). */
export async function removeObjects(store: ObjectStore, paths: readonly string[]): Promise<void> {
  const response = await call(store, `${store.url}/object/${store.bucket}`, {
    method: "DELETE",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ prefixes: paths }),
  });
  await json<unknown>(response, "remove");
}

/** What the bucket allows: the service's own limits, so the store refuses what the service would. */
export interface BucketSettings {
  fileSizeLimit: number;
  allowedMimeTypes: readonly string[];
}

/** Creates the private bucket, or updates its limits when it exists; true when it was created. */
export async function ensureBucket(store: ObjectStore, settings: BucketSettings): Promise<boolean> {
  const body = JSON.stringify({
    id: store.bucket,
    name: store.bucket,
    public: false,
    file_size_limit: settings.fileSizeLimit,
    allowed_mime_types: settings.allowedMimeTypes,
  });
  const headers = { "Content-Type": "application/json" };
  const created = await call(store, `${store.url}/bucket`, { method: "POST", headers, body });
  if (created.ok) {
    await created.body?.cancel();
    return true;
  }
  await created.body?.cancel();
  const updated = await call(store, `${store.url}/bucket/${store.bucket}`, { method: "PUT", headers, body });
  await json<unknown>(updated, "bucket");
  return false;
}
