/**
 * Ids that clients send: an id that is no uuid names nothing, and handing it
 * to Postgres as one would only make the cast fail.
 *
 * @example
 * ```ts
 * uuidOrNull("not-an-id"); // null: matches no row when sent as $1::uuid
 * ```
 */
import { z } from "zod";

// Any 8-4-4-4-12 hex string, as Postgres's uuid type reads it in its usual form.
const uuid = z.guid();

/** Whether `value` is a uuid Postgres would read. */
export function isUuid(value: string): boolean {
  return uuid.safeParse(value).success;
}

/** `value` when it is a uuid, else null, which as a `uuid` parameter equals no row's id. */
export function uuidOrNull(value: string): string | null {
  return isUuid(value) ? value : null;
}
