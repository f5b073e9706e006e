/**
 * The API contract: request and response shapes of every endpoint, as zod
 * schemas with the TypeScript types inferred from them. This module is the one
 * source of truth; the top-level `shared/` re-exports it for clients and tests.
 * It uses no Deno or server-only API, so it loads in browsers, Node and Deno.
 *
 * @example
 * ```ts
 * import { loginBody } from "./mod.ts";
 * const body = loginBody.parse({ email: "ada@example.com", password: "correct horse" });
 * ```
 */
import { z } from "zod";
import { type ErrorCode, errorCodes } from "./error-codes.ts";

export {
  type ErrorCode,
  errorCodes,
  errorStatuses,
  type RefreshErrorCode,
  refreshErrorCodes,
  type TokenErrorCode,
  tokenErrorCodes,
} from "./error-codes.ts";

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

/** A password to set, sent as `field`: 8 characters to 72 bytes (bcrypt's limit; never truncated silently). */
function newPasswordField(field: string) {
  return text(field)
    .refine(
      (value) => [...value].length >= limits.passwordMinChars,
      `${field} must be at least ${limits.passwordMinChars} characters`,
    )
    .refine(
      // bcrypt reads at most 72 bytes; a longer password would be truncated silently.
      (value) => utf8.encode(value).length <= limits.passwordMaxBytes,
      `${field} must be at most ${limits.passwordMaxBytes} bytes`,
    )
    // Refinements do not reach JSON Schema, so the documented bounds are stated here beside them.
    .meta({
      minLength: limits.passwordMinChars,
      description: `${limits.passwordMinChars} to ${limits.passwordMaxBytes} bytes in UTF-8`,
    });
}

const password = newPasswordField("password");

/** A 6-digit code mailed to the user. */
const code = text("code").regex(/^\d{6}$/, `code must be ${limits.resetCodeDigits} digits`);

const name = text("name")
  .transform((value) => value.trim())
  .pipe(
    z.string()
      .min(1, "name must not be empty")
      .max(limits.nameMaxChars, `name must be at most ${limits.nameMaxChars} characters`),
  )
  .meta({ minLength: 1, maxLength: limits.nameMaxChars, description: "trimmed before use" });

/** Body of `POST /auth/login`. */
export const loginBody = z.object({
  email,
  password: text("password"),
  /** The `deviceToken` an earlier login on this device answered: it lets the login through the account's cap. */
  deviceToken: text("deviceToken").max(200, "deviceToken must be at most 200 characters").optional().meta({
    description: "the deviceToken an earlier login answered on this device; optional",
  }),
});
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
  code,
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

/**
 * A note's version as the client last saw it: its `updatedAt`, exactly as the
 * API wrote it. A save or delete that names it changes nothing unless the
 * stored note still has that version.
 */
const expectedUpdatedAt = z
  .iso.datetime({
    precision: 3,
    error: "expectedUpdatedAt must be the note's updatedAt as the API wrote it (ISO 8601 UTC with milliseconds)",
  })
  .meta({ description: "the note's updatedAt as last read; a note changed since is not touched (409)" });

/** Body of `POST /notes-save`: the id and at least one field to change. */
export const saveNoteBody = z
  .object({
    id: text("id"),
    title: title.optional(),
    content: content.optional(),
    status: noteStatus.optional(),
    expectedUpdatedAt: expectedUpdatedAt.optional(),
  })
  .refine(
    (note) => note.title !== undefined || note.content !== undefined || note.status !== undefined,
    "At least one of title, content or status is required",
  );
export type SaveNoteBody = z.infer<typeof saveNoteBody>;
/** The changes of a save: each field given replaces the stored one. */
export type NoteChanges = Omit<SaveNoteBody, "id" | "expectedUpdatedAt">;

/** A query parameter that must be a whole number in a range, named in the message; `fallback` when omitted. */
function integerParameter<Fallback extends number | undefined>(
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
const pageLimit = (max: number, fallback: number) => integerParameter("limit", 1, max, fallback);

/** The orders of a listing, newest first either way: by creation, or by last edit. */
export const noteOrders = ["createdAt", "updatedAt"] as const;
export type NoteOrder = (typeof noteOrders)[number];

/** Query of `GET /notes-fetch`: a page, optionally filtered by status and words, in one of two orders. */
export const listNotesQuery = z.object({
  limit: pageLimit(limits.listLimitMax, limits.listLimitDefault),
  offset: integerParameter("offset", 0, Number.MAX_SAFE_INTEGER, 0),
  status: z.enum(noteStatuses, { error: `status must be one of ${noteStatuses.join(", ")}` }).optional()
    .meta({ description: "only notes of this status" }),
  q: text("q")
    .max(limits.searchMaxChars, `q must be at most ${limits.searchMaxChars} characters`)
    .transform((words) => words.trim())
    // The documented parameter is this pipe's output, so its bounds and meaning are stated on it.
    .pipe(
      z.string().min(1, "q must contain a word").meta({
        maxLength: limits.searchMaxChars,
        description: "words that must all occur in the title or content, in any order; each matches a word " +
          "starting with it, ignoring case and diacritics",
      }),
    )
    .optional(),
  order: z.enum(noteOrders, { error: `order must be one of ${noteOrders.join(", ")}` }).optional()
    .transform((order) => order ?? "createdAt")
    .meta({ description: "newest first by createdAt (when omitted) or by updatedAt; then by id" }),
});
export type ListNotesQuery = z.infer<typeof listNotesQuery>;

/** Query of `GET /notes-changes`: the changes after `since` (all current notes without it), `limit` at a time. */
export const listChangesQuery = z.object({
  since: text("since").max(200, "since must be a cursor from notes-changes").optional()
    .meta({ description: "data.cursor of an earlier answer; omit it to start with every current note" }),
  limit: integerParameter("limit", 1, limits.changesLimitMax, limits.changesLimitDefault),
});
export type ListChangesQuery = z.infer<typeof listChangesQuery>;

/** Query of `DELETE /notes-delete`. */
export const deleteNoteQuery = z.object({ id: text("id"), expectedUpdatedAt: expectedUpdatedAt.optional() });
export type DeleteNoteQuery = z.infer<typeof deleteNoteQuery>;

/** Query of `GET /notes-get`. */
export const getNoteQuery = z.object({ id: text("id") });
export type GetNoteQuery = z.infer<typeof getNoteQuery>;

/**
 * The `Idempotency-Key` header of `POST /notes-create` (draft-ietf-httpapi-idempotency-key-header):
 * 1 to 255 visible ASCII characters, chosen by the client, one per note it means to create.
 */
export const idempotencyKeyHeader = "Idempotency-Key";
export const idempotencyKey = z
  .string()
  .regex(
    new RegExp(`^[!-~]{1,${limits.idempotencyKeyMaxChars}}$`),
    `${idempotencyKeyHeader} must be 1 to ${limits.idempotencyKeyMaxChars} visible ASCII characters`,
  );

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

/** `data` of login, register, create-password and refresh. */
export const session = z.object({
  payload: user,
  /** `"Bearer <jwt>"`, as interface.md shows it. */
  accessToken: z.string().regex(/^Bearer \S+$/).meta({ description: '"Bearer " and the JWT' }),
  /** When the access token stops being accepted: 2 hours after issue. */
  expiresAt: isoTimestamp.meta({ description: "when the access token expires (2 hours after issue)" }),
  /** Opaque; trades for a new access token and a new refresh token at `POST /auth/refresh`. */
  refreshToken: z.string().min(1).meta({
    description: "opaque; send it to POST /auth/refresh for a new accessToken before or after expiresAt. " +
      "Each refresh answers a new one and retires this one.",
  }),
  /** On every sign-in (not on refresh): this device's token, for the client to keep and send with its next logins. */
  deviceToken: z.string().optional().meta({
    description: "every sign-in answers one (a refresh does not): keep the newest on this device and send it as " +
      "deviceToken with later logins; it lets them through when the account is refusing logins after many " +
      "failures, up to its own cap, for 90 days, until the password changes or is reset, the account is " +
      "suspended or signed out everywhere",
  }),
});
export type Session = z.infer<typeof session>;

/**
 * Body of `POST /auth/verify-email`: the address and the code mailed to it at
 * sign-up, and the account's own proof: its session's access token as
 * `Authorization`, or its `password`. A code alone never verifies an address.
 */
export const verifyEmailBody = z.object({
  email,
  code,
  password: text("password").optional().meta({
    description: "the account's password; needed unless the request carries the account's access token",
  }),
});
export type VerifyEmailBody = z.infer<typeof verifyEmailBody>;

/** Body of `POST /auth/resend-verification`. */
export const resendVerificationBody = z.object({ email });
export type ResendVerificationBody = z.infer<typeof resendVerificationBody>;

/** `data` of `POST /auth/resend-verification`: empty, so the answer reveals nothing about the address. */
export const verificationRequested = z.object({});
export type VerificationRequested = z.infer<typeof verificationRequested>;

/** Body of `POST /auth/change-password`. */
export const changePasswordBody = z.object({
  currentPassword: text("currentPassword"),
  newPassword: newPasswordField("newPassword"),
});
export type ChangePasswordBody = z.infer<typeof changePasswordBody>;

/** Body of `POST /auth/delete-account`: the password, re-entered, so a stolen token alone cannot erase an account. */
export const deleteAccountBody = z.object({ password: text("password") });
export type DeleteAccountBody = z.infer<typeof deleteAccountBody>;

/** `data` of `POST /auth/delete-account`: the id of the account that is gone. */
export const deletedAccount = z.object({ id: z.string() });
export type DeletedAccount = z.infer<typeof deletedAccount>;

/** Body of `POST /auth/refresh`. */
export const refreshBody = z.object({
  refreshToken: text("refreshToken").min(1, "refreshToken must not be empty").max(
    1_024,
    "refreshToken must be at most 1024 characters",
  ),
});
export type RefreshBody = z.infer<typeof refreshBody>;

/** Which sessions `POST /auth/logout` ends: the caller's, every other one of the account, or all of them. */
export const logoutScopes = ["local", "others", "global"] as const;
export type LogoutScope = (typeof logoutScopes)[number];

/** Body of `POST /auth/logout`; an empty object (or no body) ends the caller's own session. */
export const logoutBody = z.object({
  scope: z.enum(logoutScopes, { error: `scope must be one of ${logoutScopes.join(", ")}` }).optional()
    .transform((scope) => scope ?? "local")
    .meta({ description: "local when omitted" }),
});
export type LogoutBody = z.infer<typeof logoutBody>;

/** `data` of `POST /auth/logout`: how many sessions it ended. */
export const loggedOut = z.object({ scope: z.enum(logoutScopes), sessionsEnded: z.number().int() });
export type LoggedOut = z.infer<typeof loggedOut>;

/** One live session of the caller's account, as `GET /auth/sessions` lists it. */
export const sessionInfo = z.object({
  id: z.string(),
  createdAt: isoTimestamp,
  /** When the session last refreshed (or started): using an access token does not move it. */
  lastActiveAt: isoTimestamp.meta({ description: "when the session was started or last refreshed" }),
  /** When it ends unless refreshed before: the earlier of the idle and the absolute timeout. */
  expiresAt: isoTimestamp.meta({ description: "when the session ends unless refreshed (idle or absolute timeout)" }),
  userAgent: z.string().nullable(),
  /** True for the session of the token that asked. */
  current: z.boolean(),
});
export type SessionInfo = z.infer<typeof sessionInfo>;

/** `data` of `GET /auth/sessions`: the live sessions, the most recently active first. */
export const sessionList = z.object({ sessions: z.array(sessionInfo) });
export type SessionList = z.infer<typeof sessionList>;

/** Query of `DELETE /auth/sessions`. */
export const endSessionQuery = z.object({ id: text("id") });
export type EndSessionQuery = z.infer<typeof endSessionQuery>;

/** `data` of `DELETE /auth/sessions`: the ended session's id. */
export const endedSession = z.object({ id: z.string() });
export type EndedSession = z.infer<typeof endedSession>;

/** `data` of `GET /auth/user`: the caller's user record. */
export const currentUser = z.object({ payload: user });
export type CurrentUser = z.infer<typeof currentUser>;

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

/** A note deleted since the cursor: only its id. */
export const noteTombstone = z.object({ id: z.string(), deleted: z.literal(true) });
export type NoteTombstone = z.infer<typeof noteTombstone>;

/** One entry of the changes feed: a note as it is now, or the tombstone of a deleted one. */
export const noteChange = z.union([note, noteTombstone]);
export type NoteChange = z.infer<typeof noteChange>;

/** `data` of `GET /notes-changes`. */
export const changeList = z.object({
  changes: z.array(noteChange).meta({
    description: "oldest change first; each note at most once, as it is now, or as a tombstone when deleted",
  }),
  cursor: z.string().meta({ description: "opaque; send it as since to get what changes next" }),
  hasMore: z.boolean().meta({ description: "true when more changes follow this page right away" }),
});
export type ChangeList = z.infer<typeof changeList>;

/** `data` of `DELETE /notes-delete`. */
export const deletedNote = z.object({ id: z.string() });
export type DeletedNote = z.infer<typeof deletedNote>;

/** What a security event records, as `GET /auth/events` and `GET /admin-users/events` list it. */
export const securityEventTypes = [
  "registered",
  "login_succeeded",
  "login_failed",
  "login_refused_by_limit",
  "password_reset_requested",
  "password_set_with_code",
  "password_changed",
  "email_verified",
  "session_started",
  "session_ended",
  "refresh_token_reused",
  "account_suspended",
  "account_reactivated",
  "role_granted",
  "role_revoked",
  "account_deleted",
] as const;
export type SecurityEventType = (typeof securityEventTypes)[number];

/** One entry of an account's security log: never a password, code, token or hash. */
export const securityEvent = z.object({
  /** Increases with every event; pass the last one seen as `before` for the next page. */
  id: z.string().meta({ description: "increasing; the next page is before=<the last id seen>" }),
  at: isoTimestamp,
  type: z.enum(securityEventTypes),
  userId: z.string(),
  actorId: z.string().nullable().meta({
    description: "who caused it: the account itself, an admin, or null for an operator working in SQL",
  }),
  address: z.string().nullable().meta({
    description: "the client address, where one is known; in the account's own list, null for an event another " +
      "account (an admin) caused",
  }),
  userAgent: z.string().nullable().meta({ description: "as address: the client's, where one is known" }),
  details: z.record(z.string(), z.unknown()).meta({
    description: "a small object, by type: session events name sessionId (and an ended one its reason), " +
      "role events the new role",
  }),
});
export type SecurityEvent = z.infer<typeof securityEvent>;

/** `data` of `GET /auth/events` and `GET /admin-users/events`: newest first. */
export const securityEventList = z.object({ events: z.array(securityEvent) });
export type SecurityEventList = z.infer<typeof securityEventList>;

/** Query of `GET /auth/events`: a page of the caller's own events, newest first. */
export const securityEventsQuery = z.object({
  limit: pageLimit(limits.eventsLimitMax, limits.eventsLimitDefault),
  before: integerParameter("before", 1, Number.MAX_SAFE_INTEGER, undefined).meta({
    description: "only events whose id is below this one (the next page)",
  }),
});
export type SecurityEventsQuery = z.infer<typeof securityEventsQuery>;

/** Query of `GET /admin-users/events`: a page of one account's events. */
export const accountEventsQuery = securityEventsQuery.extend({ id: text("id") });
export type AccountEventsQuery = z.infer<typeof accountEventsQuery>;

/** An account as an admin sees it: the user record, how many notes it has (never what they say), when last active. */
export const managedUser = user.extend({
  noteCount: z.number().int(),
  lastActiveAt: isoTimestamp.nullable().meta({ description: "when a session of it last started or refreshed" }),
});
export type ManagedUser = z.infer<typeof managedUser>;

/** `data` of `GET /admin-users`. */
export const managedUserList = z.object({ users: z.array(managedUser), pagination });
export type ManagedUserList = z.infer<typeof managedUserList>;

const userStatus = z.enum(userStatuses, { error: `status must be one of ${userStatuses.join(", ")}` });

/** Query of `GET /admin-users`. */
export const listUsersQuery = z.object({
  query: text("query")
    .max(limits.userQueryMaxChars, `query must be at most ${limits.userQueryMaxChars} characters`)
    .optional()
    .meta({ description: "part of the email or name, case-insensitively" }),
  status: userStatus.optional(),
  limit: pageLimit(limits.listLimitMax, limits.listLimitDefault),
  offset: integerParameter("offset", 0, Number.MAX_SAFE_INTEGER, 0),
});
export type ListUsersQuery = z.infer<typeof listUsersQuery>;

/** Body of `POST /admin-users`: suspend (`SUSPENDED`) or reactivate (`ACTIVE`) an account. */
export const setUserStatusBody = z.object({ id: text("id"), status: userStatus });
export type SetUserStatusBody = z.infer<typeof setUserStatusBody>;

/** The `code` of a 403 from an admin endpoint: the caller's account is not an ADMIN (now). */
export const adminRequiredCode = "admin_required" satisfies ErrorCode;

/** Which envelope pair an endpoint speaks (interface.md, "Response envelopes"). */
export type EnvelopeKind = "auth" | "notes";

/** One problem found in a 400's input, with the field or parameter it concerns. */
export const fieldProblem = z.object({
  field: z.string().optional().meta({ description: "absent when the problem is the input as a whole" }),
  message: z.string(),
});
export type FieldProblem = z.infer<typeof fieldProblem>;

/** The `code` of a 409 from a versioned save or delete: the note has changed since the client read it. */
export const noteConflictCode = "note_conflict" satisfies ErrorCode;
/** The `code` of a 422 from a create: its `Idempotency-Key` was used for a different note. */
export const idempotencyKeyReusedCode = "idempotency_key_reused" satisfies ErrorCode;
/** The `code` of a 410 from notes-changes: deletions after the cursor were forgotten; sync again from scratch. */
export const cursorExpiredCode = "cursor_expired" satisfies ErrorCode;

/**
 * What every error envelope carries beside the interface's own fields: the
 * machine-readable reason, and on a 400 every problem found.
 */
const errorDetails = {
  code: z.enum(errorCodes).meta({
    description: "machine-readable reason, stable across releases: decide on it, never on the message. " +
      "Each code always comes with the same HTTP status; docs/errors.md says what each means and what to do.",
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
export const notesErrorEnvelope = z.object({
  error: z.string(),
  success: z.literal(false),
  ...errorDetails,
  note: note.optional().meta({
    description: `on a 409 with code ${noteConflictCode}: the note as it is stored now, to show beside the client's`,
  }),
});
export type NotesErrorEnvelope = z.infer<typeof notesErrorEnvelope>;

/** What an error may carry beside its envelope's own fields and its code; `note` only ever in the notes envelope. */
export type ErrorDetails = Pick<NotesErrorEnvelope, "fields" | "note">;
