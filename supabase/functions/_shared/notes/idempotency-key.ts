/**
 * Idempotent creates (draft-ietf-httpapi-idempotency-key-header): the
 * client's `Idempotency-Key` header, and the fingerprint of the request it
 * names, which tells a retry of the same create from a reuse of the key for
 * another note.
 *
 * @example
 * ```ts
 * const key = readIdempotencyKey(req); // undefined when the header is absent
 * const fingerprint = await requestFingerprint(body);
 * ```
 */
import { type CreateNoteBody, idempotencyKey, idempotencyKeyHeader } from "../contract/notes.ts";
import { BadRequestError } from "../http/errors.ts";

/** The request's `Idempotency-Key`, or undefined without one; 400 naming the header when it is malformed. */
export function readIdempotencyKey(req: Request): string | undefined {
  const given = req.headers.get(idempotencyKeyHeader);
  if (given === null) return undefined;
  const parsed = idempotencyKey.safeParse(given);
  if (parsed.success) return parsed.data;
  const message = parsed.error.issues[0]?.message ?? `${idempotencyKeyHeader} is invalid`;
  throw new BadRequestError(message, [{ field: idempotencyKeyHeader, message }]);
}

const utf8 = new TextEncoder();

/**
 * SHA-256 (hex) of the create as validated: title and content as stored
 * (omitted is ""), and the status after its default. So `{"title": "a"}` and
 * `{"title": "a", "status": "DRAFT"}` are the same request; unknown keys,
 * which the API ignores, do not count.
 */
export async function requestFingerprint(body: CreateNoteBody): Promise<string> {
  const canonical = JSON.stringify([body.title ?? "", body.content ?? "", body.status]);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", utf8.encode(canonical)));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
