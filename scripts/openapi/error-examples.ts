/**
 * The error examples of the OpenAPI document: one message per error status, worded per operation where it differs.
 * A test checks each against the schema it illustrates.
 */
import {
  adminRequiredCode,
  cursorExpiredCode,
  type ErrorCode,
  errorStatuses,
  idempotencyKeyReusedCode,
  limits,
  noteConflictCode,
  titleOrContentRequired,
} from "../../supabase/functions/_shared/contract/mod.ts";
import type { OperationName } from "../../shared/operations.ts";
import { note } from "./examples.ts";

/** An error answer's example: its message, the field a 400 names, its `code`, a 409's stored note. */
export interface ErrorExample {
  message: string;
  field?: string;
  code: ErrorCode;
  note?: typeof note;
}

// A 409 of a versioned save or delete: the note as another device saved it meanwhile.
const noteConflict: ErrorExample = {
  message: "Note has changed since it was read",
  code: noteConflictCode,
  note: {
    ...note,
    content: "Eggs, flour, milk, butter",
    updatedAt: "2026-01-15T09:45:00.000Z",
  },
};

// A 403 of an admin operation: the caller's account is not (or no longer) an ADMIN.
const adminRequired: ErrorExample = { message: "Admin role required", code: adminRequiredCode };

// A 403 of login, create-password and verify-email.
const accountSuspended: ErrorExample = { message: "Account is suspended", code: "account_suspended" };

// A 400 of create-password and verify-email: the code mailed is not (or no longer) the one.
const invalidCode: ErrorExample = { field: "code", message: "Invalid or expired code", code: "invalid_code" };

// A 403 of a session that has not made the second step of an account with an active second factor.
const mfaRequired: ErrorExample = {
  message: "Second factor required: send a code of the authenticator app to POST /auth/mfa/verify",
  code: "mfa_required",
};

// The answers of the second factor's own operations.
const factorNotFound: ErrorExample = { message: "The account has no such second factor", code: "factor_not_found" };
const factorLocked: ErrorExample = {
  message: "Too many wrong codes: the second factor refuses every code for a while",
  code: "rate_limited",
};
const invalidRecoveryCode: ErrorExample = { ...invalidCode, field: "recoveryCode" };
const factorLockedOut: ErrorExample = {
  message: "Too many wrong codes in a row: the second factor is locked until the password is reset",
  code: "second_factor_locked",
};

const commonErrors: Record<number, ErrorExample> = {
  400: { message: "Request body must be valid JSON", code: "invalid_request" },
  401: { message: "Invalid apikey", code: "invalid_api_key" },
  403: mfaRequired,
  404: { message: "Note not found", code: "note_not_found" },
  405: { message: "Method not allowed", code: "method_not_allowed" },
  408: { message: "Request body took too long to arrive", code: "request_timeout" },
  413: { message: `Request body must be at most ${limits.bodyMaxBytes} bytes`, code: "payload_too_large" },
  415: { message: "Content-Type must be application/json", code: "unsupported_media_type" },
  429: { message: "Too many requests from this address; try again later", code: "rate_limited" },
  500: { message: "Internal server error", code: "internal_error" },
  503: { message: "Service temporarily unavailable", code: "service_unavailable" },
};

// The 400 of an operation that takes neither a body nor a query: an unknown query parameter is all it can meet.
const unknownParameter: ErrorExample = {
  field: "bogus",
  message: "bogus is not a query parameter of this endpoint",
  code: "invalid_request",
};

const reauthenticationRequired: ErrorExample = {
  message:
    "Confirm it is you first: POST /auth/reauthenticate with the password or a code, then retry within 5 minutes",
  code: "reauthentication_required",
};
const passkeyCeremoniesThrottled: ErrorExample = {
  message: "Too many passkey ceremonies from this address; try again later",
  code: "rate_limited",
};
const passkeyNotFound: ErrorExample = { message: "Passkey not found", code: "passkey_not_found" };

// Where an operation words a status its own way.
const specificErrors: Partial<
  Record<OperationName, Record<number, ErrorExample>>
> = {
  register: {
    400: {
      field: "password",
      message: `password must be at least ${limits.passwordMinChars} characters`,
      code: "invalid_request",
    },
    409: { message: "An account with this email already exists", code: "email_taken" },
  },
  login: {
    401: { message: "Invalid email or password", code: "invalid_credentials" },
    403: accountSuspended,
    429: { message: "Too many login attempts; try again later", code: "rate_limited" },
  },
  requestPasswordReset: {
    400: { field: "email", message: "email must be a valid email address", code: "invalid_request" },
    429: { message: "Too many reset requests from this address; try again later", code: "rate_limited" },
  },
  createPassword: {
    400: invalidCode,
    403: accountSuspended,
    404: { message: "User not found", code: "user_not_found" },
  },
  sendSignInCode: {
    400: { field: "email", message: "email must be a valid email address", code: "invalid_request" },
    429: { message: "Too many code requests from this address; try again later", code: "rate_limited" },
  },
  signInWithCode: {
    400: invalidCode,
    403: accountSuspended,
    429: { message: "Too many code attempts; try again later", code: "rate_limited" },
  },
  refreshSession: {
    400: { field: "refreshToken", message: "refreshToken is required", code: "invalid_request" },
    401: {
      message: "Refresh token already used; the session has been ended",
      code: "refresh_token_reused",
    },
    429: {
      message: "Too many session refreshes from this address; try again later",
      code: "rate_limited",
    },
  },
  signOut: {
    400: {
      field: "scope",
      message: "scope must be one of local, others, global",
      code: "invalid_request",
    },
    401: { message: "Access token revoked", code: "token_revoked" },
  },
  listSessions: {
    400: unknownParameter,
    401: { message: "Access token expired", code: "token_expired" },
  },
  revokeSession: {
    400: { field: "id", message: "id is required", code: "invalid_request" },
    401: { message: "Missing access token", code: "token_missing" },
    404: { message: "Session not found", code: "session_not_found" },
  },
  getUser: { 400: unknownParameter, 401: { message: "Access token revoked", code: "token_revoked" } },
  verifyEmail: {
    400: invalidCode,
    403: accountSuspended,
    429: { message: "Too many verification attempts; try again later", code: "rate_limited" },
  },
  resendVerification: {
    400: { field: "email", message: "email must be a valid email address", code: "invalid_request" },
    429: { message: "Too many verification attempts; try again later", code: "rate_limited" },
  },
  changePassword: {
    400: {
      field: "newPassword",
      message: `newPassword must be at least ${limits.passwordMinChars} characters`,
      code: "invalid_request",
    },
    401: { message: "Password is incorrect", code: "invalid_credentials" },
    429: { message: "Too many login attempts; try again later", code: "rate_limited" },
  },
  deleteAccount: {
    400: { field: "password", message: "password is required", code: "invalid_request" },
    401: { message: "Password is incorrect", code: "invalid_credentials" },
    429: { message: "Too many login attempts; try again later", code: "rate_limited" },
  },
  listSecurityEvents: {
    400: {
      field: "limit",
      message: `limit must be an integer from 1 to ${limits.eventsLimitMax}`,
      code: "invalid_request",
    },
    401: { message: "Access token revoked", code: "token_revoked" },
  },
  mfaEnroll: {
    400: { field: "password", message: "password is required", code: "invalid_request" },
    401: { message: "Password is incorrect", code: "invalid_credentials" },
    409: { message: "The account has a second factor already: remove it first", code: "factor_exists" },
    429: { message: "Too many login attempts; try again later", code: "rate_limited" },
  },
  mfaActivate: { 400: invalidCode, 404: factorNotFound, 429: factorLocked },
  mfaVerify: {
    400: invalidCode,
    401: { message: "Access token expired", code: "token_expired" },
    403: factorLockedOut,
    404: factorNotFound,
    429: factorLocked,
  },
  mfaRecover: { 400: invalidRecoveryCode, 403: factorLockedOut, 404: factorNotFound, 429: factorLocked },
  mfaList: { 400: unknownParameter, 401: { message: "Access token revoked", code: "token_revoked" } },
  mfaUnenroll: { 400: invalidCode, 404: factorNotFound, 429: factorLocked },
  mfaRecoveryCodes: { 400: invalidCode, 404: factorNotFound, 429: factorLocked },
  reauthenticateWithProvider: {
    400: { field: "provider", message: "provider must be one of: google", code: "invalid_request" },
    404: { message: "No identity of google is linked to this account", code: "identity_not_found" },
    429: { message: "Too many sign-in attempts; try again later", code: "rate_limited" },
  },
  reauthenticate: {
    400: { field: "password", message: "send one of password, code or recoveryCode", code: "invalid_request" },
    401: { message: "Password is incorrect", code: "invalid_credentials" },
    404: factorNotFound,
    429: factorLocked,
  },
  oauthAuthorize: {
    400: {
      field: "redirect_to",
      message: "redirect_to must be an app URL listed in OAUTH_REDIRECT_URLS",
      code: "invalid_request",
    },
    429: { message: "Too many sign-in attempts; try again later", code: "rate_limited" },
  },
  oauthCallback: {
    400: {
      field: "state",
      message: "This sign-in was already completed, never started here, or started in another browser: start it " +
        "again from the app",
      code: "invalid_state",
    },
  },
  linkIdentityAuthorize: {
    400: {
      field: "flow",
      message: "This link was already opened, took longer than 10 minutes, or was never started: start it again",
      code: "invalid_state",
    },
  },
  oauthToken: {
    400: {
      field: "code",
      message:
        "code is invalid, expired, already used, or not of this app's codeVerifier: sign in with the provider again",
      code: "invalid_code",
    },
  },
  listIdentities: { 400: unknownParameter, 401: { message: "Access token expired", code: "token_expired" } },
  linkIdentity: {
    400: {
      field: "provider",
      message: "provider must be a configured provider (google, microsoft)",
      code: "invalid_request",
    },
    401: { message: "Password is incorrect", code: "invalid_credentials" },
    429: { message: "Too many login attempts; try again later", code: "rate_limited" },
  },
  completeLink: {
    400: {
      field: "code",
      message: "code is invalid, expired, already used, or of a link another session asked for: link again",
      code: "invalid_code",
    },
    401: { message: "Access token expired", code: "token_expired" },
    409: { message: "This provider identity is linked to another account", code: "identity_already_linked" },
  },
  unlinkIdentity: {
    400: { field: "id", message: "id must be an identity's id", code: "invalid_request" },
    401: { message: "Access token revoked", code: "token_revoked" },
    403: {
      message:
        "Confirm it is you first: POST /auth/reauthenticate with the password or a code, then retry within 5 minutes",
      code: "reauthentication_required",
    },
    404: { message: "Identity not found", code: "identity_not_found" },
    409: {
      message: "This is the account's only way to sign in: set a password or link another provider first",
      code: "last_sign_in_method",
    },
  },
  passkeysRegisterOptions: {
    403: reauthenticationRequired,
    409: {
      message: "The account has 10 passkeys, the most it may have: remove one first",
      code: "passkey_limit_reached",
    },
    429: passkeyCeremoniesThrottled,
  },
  passkeysRegister: {
    400: {
      field: "response",
      message: "The passkey could not be registered: ask for new options and try again",
      code: "passkey_invalid",
    },
    403: reauthenticationRequired,
    409: { message: "This passkey is registered already", code: "passkey_exists" },
  },
  passkeysLoginOptions: { 429: passkeyCeremoniesThrottled },
  passkeysLogin: {
    401: { message: "The passkey was not accepted: start again", code: "passkey_rejected" },
    403: { message: "Account is suspended", code: "account_suspended" },
  },
  passkeysList: { 400: unknownParameter, 401: { message: "Access token expired", code: "token_expired" } },
  passkeysRename: {
    400: { field: "name", message: "name must be at most 100 characters", code: "invalid_request" },
    404: passkeyNotFound,
  },
  passkeysRemove: {
    400: { field: "id", message: "id must be a passkey's id", code: "invalid_request" },
    403: reauthenticationRequired,
    404: passkeyNotFound,
    409: {
      message:
        "This passkey is the account's only way to sign in: set a password, link a provider or add a passkey first",
      code: "last_sign_in_method",
    },
  },
  listUsers: {
    400: { field: "status", message: "status must be one of ACTIVE, SUSPENDED", code: "invalid_request" },
    401: { message: "Missing access token", code: "token_missing" },
    403: adminRequired,
  },
  setUserStatus: {
    400: { field: "id", message: "An admin cannot change its own status", code: "cannot_change_own_status" },
    401: { message: "Access token revoked", code: "token_revoked" },
    403: adminRequired,
    404: { message: "User not found", code: "user_not_found" },
  },
  listAccountEvents: {
    400: { field: "id", message: "id is required", code: "invalid_request" },
    401: { message: "Access token expired", code: "token_expired" },
    403: adminRequired,
  },
  createNote: {
    400: { message: titleOrContentRequired, code: "invalid_request" },
    401: { message: "Missing access token", code: "token_missing" },
    422: {
      message: "Idempotency-Key was already used for a different note",
      code: idempotencyKeyReusedCode,
    },
  },
  getNote: {
    400: { field: "id", message: "id is required", code: "invalid_request" },
    401: { message: "Access token expired", code: "token_expired" },
  },
  listNotes: {
    400: {
      field: "limit",
      message: `limit must be an integer from 1 to ${limits.listLimitMax}`,
      code: "invalid_request",
    },
    401: { message: "Access token expired", code: "token_expired" },
  },
  listChanges: {
    400: {
      field: "since",
      message: "since must be a cursor that notes-changes gave this account",
      code: "invalid_cursor",
    },
    401: { message: "Access token expired", code: "token_expired" },
    410: { message: "The changes cursor has expired; sync again from the start", code: cursorExpiredCode },
  },
  streamChanges: {
    400: {
      field: "since",
      message: "since must be a cursor that notes-changes or notes-stream gave this account",
      code: "invalid_cursor",
    },
    401: { message: "Access token expired", code: "token_expired" },
  },
  // Anonymous accounts.
  signInAnonymously: {
    429: { message: "Too many anonymous accounts from this address; try again later", code: "rate_limited" },
  },
  upgradeAnonymous: {
    403: { message: "Sign up before adding a second factor or a passkey", code: "sign_up_required" },
    409: { message: "An account with this email already exists", code: "email_taken" },
  },
  sendUpgradeCode: {
    409: { message: "An account with this email already exists", code: "email_taken" },
    429: { message: "A code was mailed to this address lately; try again later", code: "rate_limited" },
  },
  upgradeAnonymousWithCode: {
    400: invalidCode,
    409: { message: "An account with this email already exists", code: "email_taken" },
    429: { message: "Too many code attempts; try again later", code: "rate_limited" },
  },
  mergeAnonymous: {
    409: { message: "The token is not an anonymous account's, or is the caller's own", code: "not_anonymous" },
  },
  saveNote: {
    400: { message: "At least one of title, content or status is required", code: "invalid_request" },
    401: { message: "Invalid access token", code: "token_invalid" },
    409: noteConflict,
  },
  deleteNote: {
    400: { field: "id", message: "id is required", code: "invalid_request" },
    401: { message: "Access token revoked", code: "token_revoked" },
    409: noteConflict,
  },
  createAttachment: {
    400: { field: "type", message: "type must be one of image/png, image/jpeg, ...", code: "invalid_request" },
    403: { message: "Sign up before attaching files", code: "sign_up_required" },
    409: {
      message: "A note has at most 20 attachments, pending uploads included",
      code: "attachment_limit_reached",
    },
    413: { message: "The account's attachments would pass its quota", code: "attachment_quota_exceeded" },
  },
  completeAttachment: {
    400: { field: "size", message: "Fewer bytes arrived than were declared", code: "invalid_request" },
    404: { message: "Attachment not found", code: "attachment_not_found" },
    409: { message: "No bytes have arrived for this attachment yet", code: "attachment_not_uploaded" },
    413: { message: "More bytes arrived than were declared", code: "attachment_too_large" },
    415: { message: "The file is not of type image/png", code: "attachment_type_mismatch" },
  },
  listAttachments: { 400: { field: "noteId", message: "noteId is required", code: "invalid_request" } },
  getAttachment: {
    400: { field: "id", message: "id is required", code: "invalid_request" },
    404: { message: "Attachment not found", code: "attachment_not_found" },
  },
  deleteAttachment: {
    400: { field: "id", message: "id is required", code: "invalid_request" },
    404: { message: "Attachment not found", code: "attachment_not_found" },
  },
};

/** The example of `status` for `operation`; its code must be one that comes with `status`. */
export function errorExample(
  operation: OperationName,
  status: number,
): ErrorExample {
  const example = specificErrors[operation]?.[status] ?? commonErrors[status];
  if (!example || errorStatuses[example.code] !== status) {
    throw new Error(`No example with a code of status ${status} for ${operation}`);
  }
  return example;
}
