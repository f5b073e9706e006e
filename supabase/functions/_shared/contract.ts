/**
 * The API contract: request and response shapes of every endpoint, as zod
 * schemas with the TypeScript types inferred from them. This module is the one
 * source of truth; the top-level `shared/` re-exports it for clients and tests.
 * It uses no Deno or server-only API, so it loads in browsers, Node and Deno.
 *
 * @example
 * ```ts
 * import { loginBody } from "./contract.ts";
 * const body = loginBody.parse({ email: "ada@example.com", password: "correct horse" });
 * ```
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
  accessTokenSeconds: 7_200,
} as const;

export const userRoles = ["STANDARD_USER", "ADMIN"] as const;
export const userStatuses = ["ACTIVE", "SUSPENDED"] as const;
export const noteStatuses = ["DRAFT", "PUBLISHED"] as const;

const utf8 = new TextEncoder();

/** A lone UTF-16 surrogate: with the `u` flag, a paired one is read as one code point and never matches. */
const loneSurrogate = /\p{Surrogate}/u;

/**
 * A string field that Postgres can store verbatim: no NUL character (text
 * columns reject it) and no lone UTF-16 surrogate (it would be silently
 * replaced on encoding). Messages name the field, as DESIGN.md asks.
 */
function text(field: string) {
  return z
    .string({
      error: (issue) => issue.input === undefined ? `${field} is required` : `${field} must be a string`,
    })
    .refine((value) => !value.includes("\u0000"), `${field} must not contain NUL characters`)
    .refine((value) => !loneSurrogate.test(value), `${field} must be valid Unicode`);
}

const email = text("email")
  .transform((value) => value.trim().toLowerCase())
  .pipe(
    z.email({ error: "email must be a valid email address" })
      .max(limits.emailMaxChars, `email must be at most ${limits.emailMaxChars} characters`),
  )
  // JSON Schema shows a pipe's input (any string); these say what the pipe accepts.
  .meta({ format: "email", maxLength: limits.emailMaxChars, description: "trimmed and lower-cased before use" });

const password = text("password")
  .refine(
    (value) => [...value].length >= limits.passwordMinChars,
    `password must be at least ${limits.passwordMinChars} characters`,
  )
  .refine(
    // bcrypt reads at most 72 bytes; a longer password would be truncated silently.
    (value) => utf8.encode(value).length <= limits.passwordMaxBytes,
    `password must be at most ${limits.passwordMaxBytes} bytes`,
  )
  // Refinements do not reach JSON Schema, so the documented bounds are stated here beside them.
  .meta({
    minLength: limits.passwordMinChars,
    description: `${limits.passwordMinChars} to ${limits.passwordMaxBytes} bytes in UTF-8`,
  });

const name = text("name")
  .transform((value) => value.trim())
  .pipe(
    z.string()
      .min(1, "name must not be empty")
      .max(limits.nameMaxChars, `name must be at most ${limits.nameMaxChars} characters`),
  )
  .meta({ minLength: 1, maxLength: limits.nameMaxChars, description: "trimmed before use" });

/** Body of `POST /auth/login`. */
export const loginBody = z.object({ email, password: text("password") });
export type LoginBody = z.infer<typeof loginBody>;

/** Body of `POST /auth/register`. */
export const registerBody = z.object({ name, email, password });
export type RegisterBody = z.infer<typeof registerBody>;

/** Body of `POST /auth/request-password-reset`. */
export const requestPasswordResetBody = z.object({ email });
export type RequestPasswordResetBody = z.infer<typeof requestPasswordResetBody>;

/** `data` of `POST /auth/request-password-reset`: empty, so the answer reveals nothing about the email. */
export const passwordResetRequested = z.object({});
export type PasswordResetRequested = z.infer<typeof passwordResetRequested>;

/** Body of `POST /auth/create-password`. */
export const createPasswordBody = z.object({
  email,
  password,
  code: text("code").regex(/^\d{6}$/, `code must be ${limits.resetCodeDigits} digits`),
});
export type CreatePasswordBody = z.infer<typeof createPasswordBody>;

const noteStatus = z.enum(noteStatuses, {
  error: `status must be one of ${noteStatuses.join(", ")}`,
});
const title = text("title").max(limits.titleMaxChars, `title must be at most ${limits.titleMaxChars} characters`);
const content = text("content").max(
  limits.contentMaxChars,
  `content must be at most ${limits.contentMaxChars} characters`,
);

/** The rule of interface.md: a note may not have both title and content empty. */
export const titleOrContentRequired = "At least one of title or content is required";

/** Body of `POST /notes-create`. Omitted title or content is stored as "", an omitted status as DRAFT. */
export const createNoteBody = z
  .object({
    title: title.optional(),
    content: content.optional(),
    // The default is applied by the transform, not `.default()`, so JSON Schema (and the types generated
    // from it) keeps the field optional for the client instead of always present.
    status: noteStatus.optional().transform((status) => status ?? "DRAFT")
      .meta({ description: "DRAFT when omitted" }),
  })
  .refine((note) => Boolean(note.title) || Boolean(note.content), titleOrContentRequired);
export type CreateNoteBody = z.infer<typeof createNoteBody>;

/** Body of `POST /notes-save`: the id and at least one field to change. */
export const saveNoteBody = z
  .object({
    id: text("id"),
    title: title.optional(),
    content: content.optional(),
    status: noteStatus.optional(),
  })
  .refine(
    (note) => note.title !== undefined || note.content !== undefined || note.status !== undefined,
    "At least one of title, content or status is required",
  );
export type SaveNoteBody = z.infer<typeof saveNoteBody>;

/** A query parameter that must be a whole number in a range, named in the message. */
function integerParameter(parameter: string, min: number, max: number, fallback: number) {
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

/** Query of `GET /notes-fetch`. */
export const listNotesQuery = z.object({
  limit: integerParameter("limit", 1, limits.listLimitMax, limits.listLimitDefault),
  offset: integerParameter("offset", 0, Number.MAX_SAFE_INTEGER, 0),
});
export type ListNotesQuery = z.infer<typeof listNotesQuery>;

/** Query of `DELETE /notes-delete`. */
export const deleteNoteQuery = z.object({ id: text("id") });
export type DeleteNoteQuery = z.infer<typeof deleteNoteQuery>;

const isoTimestamp = z.iso.datetime({ precision: 3 });

/** The user record of login, register and create-password (`data.payload`). */
export const user = z.object({
  id: z.string(),
  name: z.string(),
  phoneNumber: z.string().nullable(),
  email: z.string(),
  role: z.enum(userRoles),
  status: z.enum(userStatuses),
  isVerified: z.boolean(),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
});
export type User = z.infer<typeof user>;

/** `data` of login, register and create-password. */
export const session = z.object({
  payload: user,
  /** `"Bearer <jwt>"`, as interface.md shows it. */
  accessToken: z.string().regex(/^Bearer \S+$/).meta({ description: '"Bearer " and the JWT' }),
  /** When the token stops being accepted: 2 hours after issue. There is no refresh token; log in again. */
  expiresAt: isoTimestamp.meta({ description: "when the access token expires (2 hours after issue)" }),
});
export type Session = z.infer<typeof session>;

/**
 * The `Authorization` value for an access token given with or without its
 * `Bearer ` prefix (the API issues it with the prefix, as interface.md shows).
 */
export function bearer(accessToken: string): string {
  return accessToken.startsWith("Bearer ") ? accessToken : `Bearer ${accessToken}`;
}

/** A note as every notes endpoint returns it. */
export const note = z.object({
  id: z.string(),
  title: z.string(),
  content: z.string(),
  status: z.enum(noteStatuses),
  createdBy: z.string(),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
});
export type Note = z.infer<typeof note>;

export const pagination = z.object({
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  hasMore: z.boolean(),
});
export type Pagination = z.infer<typeof pagination>;

/** `data` of `GET /notes-fetch`. */
export const noteList = z.object({ notes: z.array(note), pagination, userId: z.string() });
export type NoteList = z.infer<typeof noteList>;

/** `data` of `DELETE /notes-delete`. */
export const deletedNote = z.object({ id: z.string() });
export type DeletedNote = z.infer<typeof deletedNote>;

/** Which envelope pair an endpoint speaks (interface.md, "Response envelopes"). */
export type EnvelopeKind = "auth" | "notes";

/** One problem found in a 400's input, with the field or parameter it concerns. */
export const fieldProblem = z.object({
  field: z.string().optional().meta({ description: "absent when the problem is the input as a whole" }),
  message: z.string(),
});
export type FieldProblem = z.infer<typeof fieldProblem>;

/** Why a notes endpoint refused the access token: the `code` of its 401. */
export const tokenErrorCodes = ["token_missing", "token_invalid", "token_expired", "token_revoked"] as const;
export type TokenErrorCode = (typeof tokenErrorCodes)[number];

/** What an error envelope may carry beside its own fields; each is absent where it does not apply. */
const errorDetails = {
  code: z.string().optional().meta({
    description: `machine-readable reason, stable across releases; on a notes 401 one of ${tokenErrorCodes.join(", ")}`,
  }),
  fields: z.array(fieldProblem).optional().meta({ description: "on a 400: every problem found" }),
};

/** Auth success envelope around `data`. */
export function authSuccessEnvelope<T extends z.ZodType>(data: T) {
  return z.object({ success: z.literal(true), statusCode: z.number().int(), message: z.string(), data });
}
export const authErrorEnvelope = z.object({ statusCode: z.number().int(), message: z.string(), ...errorDetails });
export type AuthErrorEnvelope = z.infer<typeof authErrorEnvelope>;

/** Notes success envelope around `data`. */
export function notesSuccessEnvelope<T extends z.ZodType>(data: T) {
  return z.object({ message: z.string(), success: z.literal(true), data });
}
export const notesErrorEnvelope = z.object({ error: z.string(), success: z.literal(false), ...errorDetails });
export type NotesErrorEnvelope = z.infer<typeof notesErrorEnvelope>;

/** The fields both error envelopes share beside their own. */
export type ErrorDetails = Pick<NotesErrorEnvelope, "code" | "fields">;
