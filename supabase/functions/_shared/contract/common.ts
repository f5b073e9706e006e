/**
 * What the contract's concerns share: the limits clients observe, the roles
 * and statuses, the string field every input is read with, whole-number query
 * parameters, timestamps and pagination.
 */
import { z } from "zod";

/** Limits that clients can observe (interface.md and DESIGN.md). */
export const limits = {
  passwordMinChars: 8,
  passwordMaxBytes: 72,
  nameMaxChars: 200,
  emailMaxChars: 254,
  titleMaxChars: 1_000,
  contentMaxChars: 100_000,
  bodyMaxBytes: 1_048_576,
  listLimitDefault: 10,
  listLimitMax: 100,
  resetCodeDigits: 6,
  signInCodeDigits: 8,
  accessTokenSeconds: 7_200,
  idempotencyKeyMaxChars: 255,
  idempotencyKeyHours: 24,
  eventsLimitDefault: 20,
  eventsLimitMax: 100,
  userQueryMaxChars: 254,
  searchMaxChars: 200,
  changesLimitDefault: 100,
  changesLimitMax: 100,
} as const;

export const userRoles = ["STANDARD_USER", "ADMIN"] as const;
export const userStatuses = ["ACTIVE", "SUSPENDED"] as const;
export const noteStatuses = ["DRAFT", "PUBLISHED"] as const;

/** A lone UTF-16 surrogate: with the `u` flag, a paired one is read as one code point and never matches. */
const loneSurrogate = /\p{Surrogate}/u;

/**
 * A string field that Postgres can store verbatim: no NUL character (text
 * columns reject it) and no lone UTF-16 surrogate (it would be silently
 * replaced on encoding). Messages name the field, as DESIGN.md asks.
 */
export function text(field: string) {
  return z
    .string({
      error: (issue) => issue.input === undefined ? `${field} is required` : `${field} must be a string`,
    })
    .refine((value) => !value.includes("\u0000"), `${field} must not contain NUL characters`)
    .refine((value) => !loneSurrogate.test(value), `${field} must be valid Unicode`);
}

/** A query parameter that must be a whole number in a range, named in the message; `fallback` when omitted. */
export function integerParameter<Fallback extends number | undefined>(
  parameter: string,
  min: number,
  max: number,
  fallback: Fallback,
) {
  const rangeMessage = max === Number.MAX_SAFE_INTEGER
    ? `${parameter} must be an integer of at least ${min}`
    : `${parameter} must be an integer from ${min} to ${max}`;
  return z
    .string()
    .regex(/^\d+$/, rangeMessage)
    .transform(Number)
    .pipe(z.number().int(rangeMessage).min(min, rangeMessage).max(max, rangeMessage))
    .optional()
    .transform((value) => value ?? fallback);
}

/** `limit` of a listing: 1 to `max`, `fallback` when omitted. */
export const pageLimit = (max: number, fallback: number) => integerParameter("limit", 1, max, fallback);

/** A timestamp as the API writes it: ISO 8601 UTC with milliseconds. */
export const isoTimestamp = z.iso.datetime({ precision: 3 });

export const pagination = z.object({
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  hasMore: z.boolean(),
});
export type Pagination = z.infer<typeof pagination>;
