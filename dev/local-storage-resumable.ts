/**
 * The local Storage stand-in's resumable uploads: the tus endpoint that
 * Supabase Storage serves for signed uploads (`/storage/v1/upload/resumable/sign`),
 * served by `@tus/server` over `@tus/file-store` under the stand-in's folder.
 * As on Storage (supabase/storage, `src/http/routes/tus/lifecycle.ts`): every
 * request but a preflight carries the signed upload token as `x-signature`,
 * which must name the object of the upload (`bucketName`/`objectName` of its
 * metadata); the bucket's size and type limits hold; the object appears only
 * once its last byte is in, linked into place as a PUT's is, and never over
 * an object that is there. An object has at most one unfinished upload: a
 * new one for it replaces the last, so one signature cannot fill the disk.
 * An upload left unfinished expires with its token.
 *
 * @example
 * ```ts
 * const resumable = createResumableUploads({ directory, files, tokenNames });
 * const answer = await resumable(request);
 * ```
 */
import { FileStore } from "@tus/file-store";
import { EVENTS, Server, type Upload } from "@tus/server";
import { join } from "node:path";
import { mediaTypeOf, type ObjectFiles } from "./local-storage-files.ts";

/** Where Storage serves signed resumable uploads, under the stand-in's `/storage/v1`. */
export const resumablePath = "/storage/v1/upload/resumable/sign";

/** How long an unfinished upload is kept: its token's lifetime, Storage's 2 hours for a signed upload URL. */
const unfinishedUploadMs = 7_200_000;

export interface ResumableUploadsOptions {
  /** The folder of unfinished uploads. */
  directory: string;
  files: ObjectFiles;
  /** Whether `token` is a signed upload token for `url` (`<bucket>/<path>`). */
  tokenNames(token: string, url: string): Promise<boolean>;
}

/** A tus refusal: @tus/server answers `status_code` with `body`. */
function refusal(status: number, statusCode: string, error: string, message: string) {
  return { status_code: status, body: JSON.stringify({ statusCode, error, message }) };
}

/** The upload's id: its object, base64url so the id is one path segment (as Storage's); one per object. */
function uploadId(bucket: string, path: string): string {
  return btoa(`${bucket}/${path}`).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** The bucket and path an upload id names, or undefined for an id that is not one of `uploadId`'s. */
function objectOf(id: string): { bucket: string; path: string } | undefined {
  try {
    const parts = atob(id.replaceAll("-", "+").replaceAll("_", "/")).split("/");
    if (parts.length < 2) return undefined;
    return { bucket: parts[0], path: parts.slice(1).join("/") };
  } catch {
    return undefined;
  }
}

/** A handler for requests under `resumablePath`. */
export function createResumableUploads(options: ResumableUploadsOptions): (req: Request) => Promise<Response> {
  const { directory, files } = options;
  const datastore = new FileStore({ directory, expirationPeriodInMilliseconds: unfinishedUploadMs });
  const server = new Server({
    path: resumablePath,
    datastore,
    allowedHeaders: ["apikey", "authorization", "x-signature", "x-client-info"],
    namingFunction: (_req, metadata) => {
      const bucket = metadata?.bucketName;
      const path = metadata?.objectName;
      if (!bucket || !path) throw refusal(400, "400", "invalid_request", "bucketName and objectName are required");
      return uploadId(bucket, path);
    },
    getFileIdFromRequest: (_req, lastPath) => lastPath && objectOf(lastPath) ? lastPath : undefined,
    maxSize: async (_req, id) => {
      const bucket = id ? await files.bucket(objectOf(id)?.bucket ?? "") : undefined;
      return bucket?.fileSizeLimit ?? 0;
    },
    onIncomingRequest: async (req, id) => {
      const object = objectOf(id);
      const token = req.headers.get("x-signature");
      if (!token) throw refusal(400, "400", "invalid_request", "Missing x-signature header");
      if (!object || !await options.tokenNames(token, `${object.bucket}/${object.path}`)) {
        throw refusal(400, "403", "Unauthorized", "Invalid signature");
      }
    },
    onUploadCreate: async (_req, upload) => {
      const object = objectOf(upload.id);
      const bucket = object && await files.bucket(object.bucket);
      if (!object || !bucket) throw refusal(400, "404", "Bucket not found", "Bucket not found");
      const type = mediaTypeOf(upload.metadata?.contentType);
      if (bucket.allowedMimeTypes.length > 0 && !bucket.allowedMimeTypes.includes(type)) {
        throw refusal(400, "415", "invalid_mime_type", `mime type ${type} is not supported`);
      }
      if (await files.holds(object.bucket, object.path)) {
        throw refusal(409, "409", "Duplicate", "The resource already exists");
      }
      // The object's last unfinished upload, if any, gives way: a client whose answer was lost starts again.
      await datastore.remove(upload.id).catch(() => {});
      return { metadata: upload.metadata };
    },
    onUploadFinish: async (_req, upload: Upload) => {
      const object = objectOf(upload.id);
      const type = mediaTypeOf(upload.metadata?.contentType) || "application/octet-stream";
      const placed = object
        ? await files.place(object.bucket, object.path, join(directory, upload.id), type)
        : "exists";
      if (placed === "exists") throw refusal(409, "409", "Duplicate", "The resource already exists");
      return {};
    },
    // An absolute Location would name the Host a request came in on, over plain HTTP.
    relativeLocation: true,
  });
  // A finished upload is let go once its answer is written (the server reads it for that answer); its bytes live on
  // as the object, to which they are linked. A HEAD for it then answers 404.
  server.on(EVENTS.POST_FINISH, (_req, _res, upload) => {
    datastore.remove(upload.id).catch(() => {});
  });
  // Unfinished uploads past their time go at start and when uploads are made, at most every ten minutes.
  let lastSweep = 0;
  const sweep = () => {
    lastSweep = Date.now();
    server.cleanUpExpiredUploads().catch((error) => console.error(`[storage] expired uploads: ${error}`));
  };
  sweep();
  return (req) => {
    if (req.method === "POST" && Date.now() - lastSweep > 600_000) sweep();
    return server.handleWeb(req);
  };
}
