/**
 * Every operation of the API in one table: where it lives, what it takes and
 * what it answers, in the contract's schemas. The typed client calls through
 * it and the OpenAPI document is generated from it, so the two cannot drift.
 *
 * @example
 * ```ts
 * import { operations } from "./operations.ts";
 * const { method, functionName } = operations.createNote; // "POST", "notes-create"
 * ```
 */
import type { z } from "zod";
import {
  accountEventsQuery,
  changeList,
  changePasswordBody,
  createNoteBody,
  createPasswordBody,
  currentUser,
  deleteAccountBody,
  deletedAccount,
  deletedNote,
  deleteNoteQuery,
  endedSession,
  endSessionQuery,
  type EnvelopeKind,
  getNoteQuery,
  idempotencyKey,
  idempotencyKeyHeader,
  limits,
  listChangesQuery,
  listNotesQuery,
  listUsersQuery,
  loggedOut,
  loginBody,
  logoutBody,
  managedUserList,
  note,
  noteList,
  passwordResetRequested,
  refreshBody,
  registerBody,
  requestPasswordResetBody,
  resendVerificationBody,
  saveNoteBody,
  securityEventList,
  securityEventsQuery,
  session,
  sessionList,
  setUserStatusBody,
  verificationRequested,
  verifyEmailBody,
} from "../supabase/functions/_shared/contract/mod.ts";

export interface OperationSpec {
  method: "GET" | "POST" | "DELETE";
  /** The Supabase function serving it, below `/functions/v1`. */
  functionName: string;
  /** The interface's own path for auth operations (`/auth/login`), served by the `auth` function. */
  interfacePath?: string;
  envelope: EnvelopeKind;
  /**
   * An auth operation that acts for a signed-in user: it takes the bearer token beside the `apikey`;
   * `"optional"`: it takes the token when there is one (verify-email, where it proves the account).
   */
  bearer?: true | "optional";
  /** Served only to a caller whose account is an ADMIN now (else 403 `admin_required`). */
  admin?: true;
  /** A path below the function's own, which its router serves (`/events` of `admin-users`). */
  subpath?: string;
  summary: string;
  description: string;
  body?: z.ZodType;
  query?: z.ZodObject;
  /** Optional request headers the operation reads, beyond `Authorization`/`apikey` and `Content-Type`. */
  headers?: readonly { name: string; schema: z.ZodType; description: string }[];
  success: { status: number; data: z.ZodType };
  /** Every error status the operation can answer, each in the operation's error envelope. */
  errors: readonly number[];
}

// Statuses every operation can answer: wrong method, unexpected failure, database unavailable.
const always = [405, 500, 503] as const;
// Statuses of any JSON body: invalid, not arrived within the deadline, too large, not JSON.
const bodyErrors = [400, 408, 413, 415] as const;

const adminOnly = "Only for a caller whose account is an ADMIN when the request arrives (the role is read from " +
  "the database on every request; a token issued before a revocation is refused with 403 admin_required). ";

/** The API's operations, keyed by the typed client's method names. */
export const operations = {
  register: {
    method: "POST",
    functionName: "auth-register",
    interfacePath: "/auth/register",
    envelope: "auth",
    summary: "Register an account",
    description: "Creates a STANDARD_USER account and signs it in. An email already registered is a 409; " +
      "too many sign-ups from one address get 429 with Retry-After.",
    body: registerBody,
    success: { status: 201, data: session },
    errors: [...bodyErrors, 401, 409, 429, ...always],
  },
  login: {
    method: "POST",
    functionName: "auth-login",
    interfacePath: "/auth/login",
    envelope: "auth",
    summary: "Log in",
    description: "Checks the password, starts a session and answers with the user, an access token valid for " +
      "2 hours and the session's refresh token. " +
      "A wrong password and an unknown email get the same 401; a suspended account gets 403; too many " +
      "failed attempts for an email from one address, or attempts from one address, get 429 with Retry-After.",
    body: loginBody,
    success: { status: 200, data: session },
    errors: [...bodyErrors, 401, 403, 429, ...always],
  },
  requestPasswordReset: {
    method: "POST",
    functionName: "auth-request-password-reset",
    interfacePath: "/auth/request-password-reset",
    envelope: "auth",
    summary: "Request a password reset code",
    description: "Mails a 6-digit code (valid 15 minutes, 5 attempts, single use) to the email if it has an " +
      "account. The answer is the same either way, in text and in timing. Limited per client address.",
    body: requestPasswordResetBody,
    success: { status: 200, data: passwordResetRequested },
    errors: [...bodyErrors, 401, 429, ...always],
  },
  createPassword: {
    method: "POST",
    functionName: "auth-create-password",
    interfacePath: "/auth/create-password",
    envelope: "auth",
    summary: "Set a password with a reset code",
    description: "Sets the password, marks the account verified and signs the user in. An unknown email is a " +
      "404; a wrong, expired or used code is a 400; a suspended account is a 403; too many attempts from one " +
      "address, or too many wrong codes for the account, get 429 with Retry-After.",
    body: createPasswordBody,
    success: { status: 200, data: session },
    errors: [...bodyErrors, 401, 403, 404, 429, ...always],
  },
  refreshSession: {
    method: "POST",
    functionName: "auth-refresh",
    interfacePath: "/auth/refresh",
    envelope: "auth",
    summary: "Refresh the session",
    description: "Trades the refresh token for a new access token and the session's next refresh token, which " +
      "replaces it. The token just replaced still answers the same for a few seconds (concurrent tabs and " +
      "retries converge); used after that, or an older one at any time, it is 401 refresh_token_reused and the " +
      "session ends. Other 401 codes: refresh_token_invalid, session_expired, session_revoked. Too many " +
      "refreshes from one address get 429 with Retry-After.",
    body: refreshBody,
    success: { status: 200, data: session },
    errors: [...bodyErrors, 401, 429, ...always],
  },
  signOut: {
    method: "POST",
    functionName: "auth-logout",
    interfacePath: "/auth/logout",
    envelope: "auth",
    bearer: true,
    summary: "Sign out",
    description: "Ends the caller's session (scope local, the default; the body may be omitted), every other " +
      "session of the account (others) or all of them (global). Their access and refresh tokens are refused " +
      "from their next use.",
    body: logoutBody,
    success: { status: 200, data: loggedOut },
    errors: [...bodyErrors, 401, ...always],
  },
  listSessions: {
    method: "GET",
    functionName: "auth-sessions",
    interfacePath: "/auth/sessions",
    envelope: "auth",
    bearer: true,
    summary: "List the account's sessions",
    description: "The account's live sessions, the most recently refreshed first; the caller's own is current.",
    success: { status: 200, data: sessionList },
    errors: [400, 401, ...always],
  },
  revokeSession: {
    method: "DELETE",
    functionName: "auth-sessions",
    interfacePath: "/auth/sessions",
    envelope: "auth",
    bearer: true,
    summary: "End one session",
    description: "Ends one live session of the caller's account; its tokens are refused from their next use. " +
      "Another user's session, an ended one, or an id that is no session is a 404.",
    query: endSessionQuery,
    success: { status: 200, data: endedSession },
    errors: [400, 401, 404, ...always],
  },
  verifyEmail: {
    method: "POST",
    functionName: "auth-verify-email",
    interfacePath: "/auth/verify-email",
    envelope: "auth",
    bearer: "optional",
    summary: "Verify the email address",
    description: "Marks the address verified with the 6-digit code mailed at sign-up (valid 24 hours, 5 tries, " +
      "single use) and signs the user in, as login answers. The code proves the mailbox; the request must also " +
      "prove the account, with the account's access token (the app it signed up in) or its password: a code " +
      "alone is 401 credentials_required and changes nothing, a wrong password 401 invalid_credentials (counted " +
      "as a failed login). A wrong, used, expired or burned code gets 400 naming code; a suspended account 403; " +
      "too many calls from one address, or too many failed passwords, 429.",
    body: verifyEmailBody,
    success: { status: 200, data: session },
    errors: [...bodyErrors, 401, 403, 429, ...always],
  },
  resendVerification: {
    method: "POST",
    functionName: "auth-resend-verification",
    interfacePath: "/auth/resend-verification",
    envelope: "auth",
    summary: "Mail a new verification code",
    description: "Mails a new code to an account whose address is not verified yet, at most once a minute and 5 " +
      "times a day. The answer is the same 200 for every address; too many calls from one address get 429.",
    body: resendVerificationBody,
    success: { status: 200, data: verificationRequested },
    errors: [...bodyErrors, 401, 429, ...always],
  },
  changePassword: {
    method: "POST",
    functionName: "auth-change-password",
    interfacePath: "/auth/change-password",
    envelope: "auth",
    bearer: true,
    summary: "Change the password",
    description: "Sets a new password for the signed-in user who knows the current one, and answers a fresh " +
      "session, as login. Every other session and token of the account is refused from its next request. A wrong " +
      "current password is 401 invalid_credentials and counts toward the login limits (429 past them).",
    body: changePasswordBody,
    success: { status: 200, data: session },
    errors: [...bodyErrors, 401, 429, ...always],
  },
  deleteAccount: {
    method: "POST",
    functionName: "auth-delete-account",
    interfacePath: "/auth/delete-account",
    envelope: "auth",
    bearer: true,
    summary: "Delete the account",
    description: "Erases the signed-in user's account, its notes, sessions, codes and queued mails in one " +
      "transaction; the password is re-entered. A wrong password is 401 invalid_credentials, counts toward the " +
      "login limits (429 past them) and deletes nothing. The address can then register again.",
    body: deleteAccountBody,
    success: { status: 200, data: deletedAccount },
    errors: [...bodyErrors, 401, 429, ...always],
  },
  getUser: {
    method: "GET",
    functionName: "auth-user",
    interfacePath: "/auth/user",
    envelope: "auth",
    bearer: true,
    summary: "The signed-in user",
    description: "The caller's user record, while the session holds.",
    success: { status: 200, data: currentUser },
    errors: [400, 401, ...always],
  },
  listSecurityEvents: {
    method: "GET",
    functionName: "auth-events",
    interfacePath: "/auth/events",
    envelope: "auth",
    bearer: true,
    summary: "The account's security events",
    description: "The caller's own security events (sign-ups, sign-ins and failed ones, password changes, " +
      "sessions started and ended, suspensions, ...), newest first, a page at a time: pass the last id seen " +
      "as before. An event an admin caused names the admin as actorId, without its address or user agent. " +
      "Kept 90 days by default.",
    query: securityEventsQuery,
    success: { status: 200, data: securityEventList },
    errors: [400, 401, ...always],
  },
  listUsers: {
    method: "GET",
    functionName: "admin-users",
    envelope: "auth",
    bearer: true,
    admin: true,
    summary: "List accounts (admin)",
    description: adminOnly + "Accounts newest first, filtered by query (part of the email or name, " +
      "case-insensitively) and status, with each one's note count and last activity; never a note's title " +
      "or content.",
    query: listUsersQuery,
    success: { status: 200, data: managedUserList },
    errors: [400, 401, 403, ...always],
  },
  setUserStatus: {
    method: "POST",
    functionName: "admin-users",
    envelope: "auth",
    bearer: true,
    admin: true,
    summary: "Suspend or reactivate an account (admin)",
    description: adminOnly + "SUSPENDED ends every session and token of the account from its next request " +
      "and makes login answer 403; ACTIVE lets it log in again. An admin's own id is a 400, and so is suspending " +
      "an ADMIN (an operator revokes the role first); an unknown id is a 404.",
    body: setUserStatusBody,
    success: { status: 200, data: currentUser },
    errors: [...bodyErrors, 401, 403, 404, ...always],
  },
  listAccountEvents: {
    method: "GET",
    functionName: "admin-users",
    subpath: "/events",
    envelope: "auth",
    bearer: true,
    admin: true,
    summary: "An account's security events (admin)",
    description: adminOnly + "The security events of the account id, newest first, a page at a time " +
      "(before = the last id seen). An id that names no account lists none.",
    query: accountEventsQuery,
    success: { status: 200, data: securityEventList },
    errors: [400, 401, 403, ...always],
  },
  createNote: {
    method: "POST",
    functionName: "notes-create",
    envelope: "notes",
    summary: "Create a note",
    description: "Creates a note owned by the caller. At least one of title or content is required; an omitted " +
      "one is stored as an empty string. Status defaults to DRAFT. With an Idempotency-Key, a repeat of the same " +
      `create within ${limits.idempotencyKeyHours} hours answers the same 201 with the note the first one made and ` +
      "makes nothing (a concurrent repeat waits for the first); the same key with a different body is a 422 " +
      "(code idempotency_key_reused). Keys belong to their user.",
    body: createNoteBody,
    headers: [{
      name: idempotencyKeyHeader,
      schema: idempotencyKey,
      description: `1 to ${limits.idempotencyKeyMaxChars} visible ASCII characters chosen by the client, one per ` +
        "note it means to create (a UUID does); send the same key when retrying that create",
    }],
    success: { status: 201, data: note },
    errors: [...bodyErrors, 401, 422, ...always],
  },
  getNote: {
    method: "GET",
    functionName: "notes-get",
    envelope: "notes",
    summary: "Read one note",
    description: "One of the caller's notes as it is stored now. Another user's note, no note, or a malformed id " +
      "is a 404.",
    query: getNoteQuery,
    success: { status: 200, data: note },
    errors: [400, 401, 404, ...always],
  },
  listNotes: {
    method: "GET",
    functionName: "notes-fetch",
    envelope: "notes",
    summary: "List the caller's notes",
    description: "One page of the caller's notes, newest first (createdAt, or updatedAt with order=updatedAt, " +
      "then id, descending), with the total that match. status keeps one status; q keeps notes that contain " +
      "every word of it in the title or content, in any order, ignoring case and diacritics, each word matching " +
      `the start of a word. An unknown parameter or value, or a q over ${limits.searchMaxChars} characters, is a 400.`,
    query: listNotesQuery,
    success: { status: 200, data: noteList },
    errors: [400, 401, ...always],
  },
  listChanges: {
    method: "GET",
    functionName: "notes-changes",
    envelope: "notes",
    summary: "What changed in the caller's notes",
    description: "The caller's notes that changed after the cursor `since`, oldest change first, each at most " +
      "once as it is now, and each note deleted since as a tombstone {id, deleted: true}; without since, every " +
      "current note. Send data.cursor as since for what follows; hasMore says whether more follow right away. " +
      "Nothing written while a client pages is skipped. Deletions are kept NOTES_TOMBSTONE_DAYS (30 by default): " +
      "a cursor that needs an older one is a 410 with code cursor_expired (sync again without since). A cursor " +
      "that is not one this service gave the caller is a 400.",
    query: listChangesQuery,
    success: { status: 200, data: changeList },
    errors: [400, 401, 410, ...always],
  },
  saveNote: {
    method: "POST",
    functionName: "notes-save",
    envelope: "notes",
    summary: "Update a note",
    description: "Changes the given fields of one of the caller's notes and answers with the updated note, whose " +
      "updatedAt is strictly later than before. With expectedUpdatedAt (the updatedAt last read), a note changed " +
      "since is left as it is and answered 409 with code note_conflict and the stored note. Another user's note, " +
      "or no note, is a 404. Repeating a save is safe.",
    body: saveNoteBody,
    success: { status: 200, data: note },
    errors: [...bodyErrors, 401, 404, 409, ...always],
  },
  deleteNote: {
    method: "DELETE",
    functionName: "notes-delete",
    envelope: "notes",
    summary: "Delete a note",
    description: "Deletes one of the caller's notes and answers with its id. With expectedUpdatedAt, a note " +
      "changed since is kept and answered 409 with code note_conflict and the stored note. Another user's note, " +
      "or no note, is a 404 (so is a repeated delete: the note is gone either way).",
    query: deleteNoteQuery,
    success: { status: 200, data: deletedNote },
    errors: [400, 401, 404, 409, ...always],
  },
} as const satisfies Record<string, OperationSpec>;

export type OperationName = keyof typeof operations;

/** The path, below the functions' base URL, that clients call and the OpenAPI document lists for `spec`. */
export function pathOf(spec: OperationSpec): string {
  return spec.interfacePath ?? `/${spec.functionName}${spec.subpath ?? ""}`;
}
