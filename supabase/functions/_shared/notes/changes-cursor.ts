/**
 * The changes feed's cursor: opaque to clients, it names a point in one
 * user's change sequence (the number of the last change the client has) and
 * that user, so a cursor taken from one account is refused by another rather
 * than read against a sequence it was never part of.
 *
 * @example
 * ```ts
 * const cursor = encodeChangesCursor(caller.sub, 42);
 * const after = readChangesCursor(cursor, caller.sub); // 42
 * ```
 */
import { BadRequestError } from "../http/errors.ts";

const version = "c1";

function toBase64Url(text: string): string {
  return btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): string | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  try {
    return atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  } catch {
    return undefined;
  }
}

/** The cursor of `owner`'s change sequence after change number `change`. */
export function encodeChangesCursor(owner: string, change: number): string {
  return toBase64Url(`${version}.${owner}.${change}`);
}

/**
 * The change number `cursor` stands at, for the caller `owner`; a 400 naming
 * `field` (the query's `since`, or the `Last-Event-ID` header of a stream's
 * reconnect) when it is not a cursor this service gave that caller.
 */
export function readChangesCursor(cursor: string, owner: string, field = "since"): number {
  const [given, cursorOwner, change, ...rest] = fromBase64Url(cursor)?.split(".") ?? [];
  const number = /^\d{1,15}$/.test(change ?? "") ? Number(change) : Number.NaN;
  if (given !== version || cursorOwner !== owner || rest.length > 0 || Number.isNaN(number)) {
    const message = `${field} must be a cursor that notes-changes or notes-stream gave this account`;
    throw new BadRequestError(message, [{ field, message }], { code: "invalid_cursor" });
  }
  return number;
}
