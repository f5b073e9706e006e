/**
 * The local stack's stand-in for Supabase Storage: the subset of its HTTP API
 * (`/storage/v1/...`) that the functions and the typed client use, served
 * from files under the stack's data folder, so the functions' code is the
 * same on `npm start` as on hosted Supabase. As there, the service role key
 * is the one credential that may sign URLs, read, remove and set up buckets;
 * a signed URL (an HS256 token under JWT_SECRET, as Storage signs its own)
 * names one object and lives a fixed time; a bucket refuses files over its
 * size limit and of types it does not allow. A signed upload's token also
 * takes the file in parts, resumably (`local-storage-resumable.ts`).
 *
 * @example
 * ```ts
 * const storage = createLocalStorage({ dataDir: ".data/storage", serviceKey, jwtSecret });
 * ```
 */
import { jwtVerify, SignJWT } from "jose";
import { timingSafeEqual } from "node:crypto";
import { dirname, join } from "node:path";
import { type BucketRecord, mediaTypeOf, ObjectFiles } from "./local-storage-files.ts";
import { createResumableUploads, resumablePath } from "./local-storage-resumable.ts";

export interface LocalStorageOptions {
  dataDir: string;
  serviceKey: string;
  jwtSecret: string;
}

/** How long a signed upload URL lives: Supabase Storage's fixed 2 hours. */
const uploadUrlSeconds = 7_200;
const segment = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const corsHeaders = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Allow-Methods": "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS",
  "Access-Control-Allow-Headers":
    "authorization, apikey, content-type, x-upsert, range, cache-control, tus-resumable, upload-length, " +
    "upload-offset, upload-metadata, x-client-info",
  "Access-Control-Expose-Headers": "content-range, content-length, content-disposition, etag, location, upload-offset",
};

/** Storage's error body: HTTP status, and its own statusCode as a string. */
function storageError(status: number, statusCode: string, error: string, message: string): Response {
  return Response.json({ statusCode, error, message }, { status, headers: corsHeaders });
}

function ok(body: unknown): Response {
  return Response.json(body, { headers: corsHeaders });
}

/** `bucket` and `path` of `/<bucket>/<path...>`, when each segment is one a server-chosen path has. */
function objectRef(rest: string): { bucket: string; path: string } | undefined {
  const segments = rest.split("/");
  if (segments.length < 2 || !segments.every((part) => segment.test(part) && part !== "..")) return undefined;
  return { bucket: segments[0], path: segments.slice(1).join("/") };
}

/** A handler for `/storage/v1/...`, or undefined for any other path. */
export function createLocalStorage(options: LocalStorageOptions) {
  const files = new ObjectFiles(options.dataDir);
  const key = new TextEncoder().encode(options.jwtSecret);
  const serviceKey = new TextEncoder().encode(options.serviceKey);

  const isService = (req: Request) => {
    const given = new TextEncoder().encode(/^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "")?.[1] ?? "");
    return given.length === serviceKey.length && timingSafeEqual(given, serviceKey);
  };
  const sign = (url: string, purpose: string, seconds: number) =>
    new SignJWT({ url, purpose }).setProtectedHeader({ alg: "HS256" }).setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + seconds).sign(key);
  const tokenNames = async (token: string, url: string, purpose: string) => {
    try {
      const { payload } = await jwtVerify(token, key, { algorithms: ["HS256"] });
      return payload.url === url && payload.purpose === purpose;
    } catch {
      return false;
    }
  };
  const queryTokenNames = (req: Request, url: string, purpose: string) =>
    tokenNames(new URL(req.url).searchParams.get("token") ?? "", url, purpose);
  const resumable = createResumableUploads({
    directory: join(options.dataDir, "resumable"),
    files,
    tokenNames: (token, url) => tokenNames(token, url, "upload"),
  });

  async function upload(req: Request, bucket: BucketRecord, ref: { bucket: string; path: string }) {
    const type = mediaTypeOf(req.headers.get("content-type"));
    if (bucket.allowedMimeTypes.length > 0 && !bucket.allowedMimeTypes.includes(type)) {
      return storageError(400, "415", "invalid_mime_type", `mime type ${type} is not supported`);
    }
    const stored = await files.write(ref.bucket, ref.path, req.body, type, bucket.fileSizeLimit);
    if (stored === "too_large") {
      return storageError(400, "413", "Payload too large", "The object exceeded the maximum allowed size");
    }
    if (stored === "exists") return storageError(400, "409", "Duplicate", "The resource already exists");
    return ok({ Key: `${ref.bucket}/${ref.path}` });
  }

  async function serve(req: Request, ref: { bucket: string; path: string }, downloadName: string | null) {
    const object = await files.open(ref.bucket, ref.path, req.headers.get("range"));
    if (!object) return storageError(400, "404", "not_found", "Object not found");
    const headers: Record<string, string> = {
      ...corsHeaders,
      "Content-Type": object.contentType,
      "Content-Length": String(object.length),
      "Accept-Ranges": "bytes",
      "Cache-Control": "no-cache",
      "X-Content-Type-Options": "nosniff",
    };
    if (object.range) headers["Content-Range"] = `bytes ${object.range.start}-${object.range.end}/${object.size}`;
    if (downloadName !== null) {
      const name = downloadName || ref.path.split("/").pop() || "file";
      headers["Content-Disposition"] = `attachment; filename="${name.replace(/[^\x20-\x7e]|"/g, "_")}"; ` +
        `filename*=UTF-8''${encodeURIComponent(name)}`;
    }
    return new Response(req.method === "HEAD" ? null : object.body, { status: object.range ? 206 : 200, headers });
  }

  return (req: Request, pathname: string): Promise<Response> | undefined => {
    if (!pathname.startsWith("/storage/v1/")) return undefined;
    if (pathname === resumablePath || pathname.startsWith(`${resumablePath}/`)) return resumable(req);
    return (async () => {
      if (req.method === "OPTIONS") return new Response(null, { status: 204, headers: corsHeaders });
      const route = pathname.slice("/storage/v1".length);
      const query = new URL(req.url).searchParams;
      const signedUpload = /^\/object\/upload\/sign\/(.+)$/.exec(route);
      if (signedUpload) {
        const ref = objectRef(signedUpload[1]);
        const bucket = ref && await files.bucket(ref.bucket);
        if (!ref || !bucket) return storageError(400, "404", "Bucket not found", "Bucket not found");
        const url = `${ref.bucket}/${ref.path}`;
        if (req.method === "POST" && isService(req)) {
          const token = await sign(url, "upload", uploadUrlSeconds);
          return ok({ url: `/object/upload/sign/${url}?token=${token}`, token });
        }
        if (req.method === "PUT" && await queryTokenNames(req, url, "upload")) return await upload(req, bucket, ref);
        return storageError(400, "403", "Unauthorized", "Invalid signature");
      }
      const signed = /^\/object\/sign\/(.+)$/.exec(route);
      if (signed) {
        const ref = objectRef(signed[1]);
        if (!ref) return storageError(400, "404", "not_found", "Object not found");
        const url = `${ref.bucket}/${ref.path}`;
        if (req.method === "POST" && isService(req)) {
          const { expiresIn } = await req.json().catch(() => ({})) as { expiresIn?: unknown };
          if (typeof expiresIn !== "number" || !(expiresIn >= 1)) {
            return storageError(400, "400", "invalid_request", "expiresIn must be a number of seconds");
          }
          return ok({ signedURL: `/object/sign/${url}?token=${await sign(url, "download", expiresIn)}` });
        }
        if ((req.method === "GET" || req.method === "HEAD") && await queryTokenNames(req, url, "download")) {
          return await serve(req, ref, query.get("download"));
        }
        return storageError(400, "400", "InvalidJWT", "Invalid or expired signature");
      }
      if (!isService(req)) return storageError(400, "403", "Unauthorized", "Invalid JWT");
      const authenticated = /^\/object\/authenticated\/(.+)$/.exec(route);
      if (authenticated && (req.method === "GET" || req.method === "HEAD")) {
        const ref = objectRef(authenticated[1]);
        return ref ? await serve(req, ref, null) : storageError(400, "404", "not_found", "Object not found");
      }
      const removal = /^\/object\/([^/]+)$/.exec(route);
      if (removal && req.method === "DELETE") {
        const { prefixes } = await req.json().catch(() => ({})) as { prefixes?: unknown };
        if (!Array.isArray(prefixes) || !prefixes.every((path) => typeof path === "string")) {
          return storageError(400, "400", "invalid_request", "prefixes must be a list of paths");
        }
        const removed = await files.remove(removal[1], prefixes.filter((path) => objectRef(`${removal[1]}/${path}`)));
        return ok(removed.map((name) => ({ name, bucket_id: removal[1] })));
      }
      const bucketRoute = /^\/bucket(?:\/([^/]+))?$/.exec(route);
      if (bucketRoute && (req.method === "POST" || req.method === "PUT")) {
        const body = await req.json().catch(() => ({})) as Record<string, unknown>;
        const id = bucketRoute[1] ?? String(body.id ?? "");
        if (!segment.test(id)) return storageError(400, "400", "invalid_request", "a bucket id is required");
        const exists = await files.bucket(id);
        if (req.method === "POST" && exists) {
          return storageError(400, "409", "Duplicate", "The resource already exists");
        }
        if (req.method === "PUT" && !exists) return storageError(400, "404", "Bucket not found", "Bucket not found");
        await files.saveBucket(id, {
          fileSizeLimit: typeof body.file_size_limit === "number" ? body.file_size_limit : undefined,
          allowedMimeTypes: Array.isArray(body.allowed_mime_types) ? body.allowed_mime_types.map(String) : [],
        });
        return ok(req.method === "POST" ? { name: id } : { message: "Successfully updated" });
      }
      return storageError(400, "404", "not_found", `No route ${req.method} ${route}`);
    })();
  };
}

/** The local store's folder: beside the embedded database's, under the stack's data folder. */
export function localStorageDir(pgliteDataDir: string): string {
  return join(dirname(pgliteDataDir), "storage");
}
