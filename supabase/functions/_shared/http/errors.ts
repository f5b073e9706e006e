/**
 * Typed HTTP errors. Handlers throw these; `endpoint.ts` turns them into the
 * auth or notes envelope in exactly one place. Each carries a `code` of
 * `error-codes.ts`, and its status is the one that code comes with, so the
 * two never disagree.
 *
 * @example
 * ```ts
 * throw new NotFoundError("note_not_found", "Note not found");
 * ```
 */
import type { Note } from "../contract/notes.ts";
import type { ErrorDetails, FieldProblem } from "../contract/envelopes.ts";
import {
  type CodeOf,
  type ErrorCode,
  errorStatuses,
  type RefreshErrorCode,
  type TokenErrorCode,
} from "../contract/error-codes.ts";

/** What an error may carry besides its code and message. */
interface HttpErrorOptions extends ErrorOptions {
  /** Headers of the answer (`Retry-After`, `Allow`, ...). */
  headers?: Record<string, string>;
  /** What the error envelope carries beside its own fields and the code (`fields`, `note`). */
  details?: ErrorDetails;
}

export class HttpError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly details: ErrorDetails;

  constructor(readonly code: ErrorCode, message: string, options: HttpErrorOptions = {}) {
    const { headers = {}, details = {}, ...errorOptions } = options;
    super(message, errorOptions);
    this.name = "HttpError";
    this.status = errorStatuses[code];
    this.headers = headers;
    this.details = details;
  }
}

/**
 * 400: input that is missing or invalid. `message` is the first problem, as
 * the interface shows it; `fields` lists every problem found, each with the
 * field or parameter it concerns, so a form can mark its inputs. The code is
 * `invalid_request` unless the input is well-formed but names something
 * unusable (a wrong one-time code, a foreign cursor).
 */
export class BadRequestError extends HttpError {
  constructor(
    message: string,
    fields: readonly FieldProblem[] = [{ message }],
    options: ErrorOptions & { code?: CodeOf<400> } = {},
  ) {
    const { code = "invalid_request", ...errorOptions } = options;
    super(code, message, { ...errorOptions, details: { fields: [...fields] } });
    this.name = "BadRequestError";
  }
}

/** 401: missing or invalid credentials (a wrong password, a missing or wrong `apikey`). */
export class UnauthorizedError extends HttpError {
  constructor(code: CodeOf<401>, message: string, headers: Record<string, string> = {}) {
    super(code, message, { headers });
    this.name = "UnauthorizedError";
  }
}

const tokenErrorMessages: Record<TokenErrorCode, string> = {
  token_missing: "Missing access token",
  token_invalid: "Invalid access token",
  token_expired: "Access token expired",
  token_revoked: "Access token revoked",
};

/**
 * 401 of a notes endpoint: the bearer token is missing, malformed or forged,
 * expired, or revoked. `code` tells an app which (log in again after
 * `token_expired` or `token_revoked`; a bug after `token_invalid`), and
 * `WWW-Authenticate` says the same in RFC 6750's terms.
 */
export class InvalidTokenError extends UnauthorizedError {
  constructor(code: TokenErrorCode, message = tokenErrorMessages[code]) {
    // RFC 6750 section 3.1: a request without a token gets the challenge and no error code.
    const challenge = code === "token_missing"
      ? "Bearer"
      : `Bearer error="invalid_token", error_description="${message}"`;
    super(code, message, { "WWW-Authenticate": challenge });
    this.name = "InvalidTokenError";
  }
}

const refreshErrorMessages: Record<RefreshErrorCode, string> = {
  refresh_token_invalid: "Invalid refresh token",
  refresh_token_reused: "Refresh token already used; the session has been ended",
  session_expired: "Session expired; log in again",
  session_revoked: "Session ended; log in again",
};

/**
 * 401 of `POST /auth/refresh`. Every code means the app must ask its user to
 * log in again; `refresh_token_reused` also says the session was ended because
 * a copy of one of its refresh tokens was used.
 */
export class InvalidRefreshTokenError extends UnauthorizedError {
  constructor(code: RefreshErrorCode) {
    super(code, refreshErrorMessages[code]);
    this.name = "InvalidRefreshTokenError";
  }
}

/** 403: the caller is known but not allowed (a suspended account, an address not yet verified, not an admin). */
export class ForbiddenError extends HttpError {
  constructor(code: CodeOf<403>, message: string) {
    super(code, message);
    this.name = "ForbiddenError";
  }
}

/** 404: the request names something (a note, a session, an account, a path) that does not exist for this caller. */
export class NotFoundError extends HttpError {
  constructor(code: CodeOf<404>, message: string) {
    super(code, message);
    this.name = "NotFoundError";
  }
}

/** 409: the request conflicts with what is stored (an email already registered, a newer version of a note). */
export class ConflictError extends HttpError {
  constructor(code: CodeOf<409>, message: string, options: HttpErrorOptions = {}) {
    super(code, message, options);
    this.name = "ConflictError";
  }
}

/**
 * 409 of a versioned save or delete: the note has a newer version than the
 * one the client named. Nothing was changed; the answer carries the stored
 * note so the app can show both and let the user merge.
 */
export class NoteConflictError extends ConflictError {
  constructor(stored: Note) {
    super("note_conflict", "Note has changed since it was read", { details: { note: stored } });
    this.name = "NoteConflictError";
  }
}

/** 422: an `Idempotency-Key` already used for a create with a different body (draft-ietf-httpapi-idempotency-key-header). */
export class IdempotencyKeyReusedError extends HttpError {
  constructor() {
    super("idempotency_key_reused", "Idempotency-Key was already used for a different note");
    this.name = "IdempotencyKeyReusedError";
  }
}

/**
 * 410 of the changes feed: deletions after the cursor are no longer kept
 * (tombstones live `NOTES_TOMBSTONE_DAYS`), so what it would answer is
 * incomplete. The client drops its copy and syncs again without a cursor.
 */
export class CursorExpiredError extends HttpError {
  constructor() {
    super("cursor_expired", "The changes cursor has expired; sync again from the start");
    this.name = "CursorExpiredError";
  }
}

/** 415: the body is not of a media type the endpoint reads. */
export class UnsupportedMediaTypeError extends HttpError {
  constructor(message: string) {
    super("unsupported_media_type", message);
    this.name = "UnsupportedMediaTypeError";
  }
}

/** 405: the method is not one the endpoint serves; `Allow` lists those it does. */
export class MethodNotAllowedError extends HttpError {
  constructor(allowed: readonly string[]) {
    super("method_not_allowed", "Method not allowed", { headers: { Allow: allowed.join(", ") } });
    this.name = "MethodNotAllowedError";
  }
}

/** 503: a dependency (the database, or the mail provider's configuration) is not available; the client may retry. */
export class ServiceUnavailableError extends HttpError {
  constructor(options: ErrorOptions & { message?: string; retryAfter?: number } = {}) {
    const { message = "Service temporarily unavailable", retryAfter = 5, ...errorOptions } = options;
    super("service_unavailable", message, { ...errorOptions, headers: { "Retry-After": String(retryAfter) } });
    this.name = "ServiceUnavailableError";
  }
}

/** 429: a brute-force limit is reached; `Retry-After` says in how many seconds it lifts. */
export class TooManyRequestsError extends HttpError {
  constructor(message: string, retryAfterSeconds: number) {
    super("rate_limited", message, { headers: { "Retry-After": String(retryAfterSeconds) } });
    this.name = "TooManyRequestsError";
  }
}

/** 413: the body is larger than the endpoint accepts. */
export class PayloadTooLargeError extends HttpError {
  constructor(maxBytes: number) {
    super("payload_too_large", `Request body must be at most ${maxBytes} bytes`);
    this.name = "PayloadTooLargeError";
  }
}

/** 408: the body did not arrive in time after the request's headers; reading it was stopped. */
export class RequestTimeoutError extends HttpError {
  constructor() {
    super("request_timeout", "Request body took too long to arrive", { headers: { Connection: "close" } });
    this.name = "RequestTimeoutError";
  }
}

/**
 * The client hung up before its body arrived. Nobody is left to answer, so it
 * is logged as a client abort (499, nginx's "client closed request"), never as
 * a server error.
 */
export class ClientAbortedError extends HttpError {
  constructor(options?: ErrorOptions) {
    super("client_closed_request", "Client closed the request", options);
    this.name = "ClientAbortedError";
  }
}
