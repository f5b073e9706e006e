/**
 * The `apikey` check of the auth endpoints: the header must equal the legacy
 * anon key or one of the project's publishable keys. Its comparison also
 * checks the mail-dispatch secret.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { UnauthorizedError } from "./errors.ts";

// Digests have one length, so the comparison takes the same time whatever was sent.
const digest = (value: string) => createHash("sha256").update(value).digest();

/** Whether `given` is one of `keys`, compared in time that depends on neither. */
export function isOneOf(given: string, keys: ReadonlySet<string>): boolean {
  const givenDigest = digest(given);
  let matched = false;
  for (const key of keys) matched = timingSafeEqual(givenDigest, digest(key)) || matched;
  return matched;
}

/** Throws a 401 unless the request's `apikey` header is one of `keys`. */
export function requireApiKey(req: Request, keys: ReadonlySet<string>): void {
  const given = req.headers.get("apikey");
  if (!given) throw new UnauthorizedError("invalid_api_key", "Missing apikey header");
  if (!isOneOf(given, keys)) throw new UnauthorizedError("invalid_api_key", "Invalid apikey");
}
