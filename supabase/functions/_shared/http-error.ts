/**
 * Typed HTTP errors. Handlers throw these; `endpoint.ts` turns them into the
 * auth or notes envelope in exactly one place.
 *
 * @example
 * ```ts
 * throw new NotFoundError("Note not found");
 * ```
 */
import {
  cursorExpiredCode,
  type ErrorDetails,
  type FieldProblem,
  idempotencyKeyReusedCode,
  type Note,
  noteConflictCode,
  type RefreshErrorCode,
  type TokenErrorCode,
} from "./contract.ts";

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    options?: ErrorOptions,
    /** What the error envelope carries beside its own fields (`code`, `fields`). */
    readonly details: ErrorDetails = {},
  ) {
    super(message, options);
    this.name = "HttpError";
  }
}

/**
 * 400: input that is missing or invalid. `message` is the first problem, as
 * the interface shows it; `fields` lists every problem found, each with the
 * field or parameter it concerns, so a form can mark its inputs.
 */
export class BadRequestError extends HttpError {
  constructor(message: string, fields: readonly FieldProblem[] = [{ message }], options?: ErrorOptions) {
    super(400, message, {}, options, { fields: [...fields] });
    this.name = "BadRequestError";
  }
}

/** 401: missing or invalid credentials (a wrong password, a missing or wrong `apikey`). */
export class UnauthorizedError extends HttpError {
  constructor(message: string, headers: Record<string, string> = {}, details: ErrorDetails = {}) {
    super(401, message, headers, undefined, details);
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
  constructor(readonly code: TokenErrorCode) {
    const message = tokenErrorMessages[code];
    // RFC 6750 section 3.1: a request without a token gets the challenge and no error code.
    const challenge = code === "token_missing"
      ? "Bearer"
      : `Bearer error="invalid_token", error_description="${message}"`;
    super(message, { "WWW-Authenticate": challenge }, { code });
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
  constructor(readonly code: RefreshErrorCode) {
    super(refreshErrorMessages[code], {}, { code });
    this.name = "InvalidRefreshTokenError";
  }
}

/** 403: the caller is known but not allowed (a suspended account, an address not yet verified). */
export class ForbiddenError extends HttpError {
  constructor(message: string, details: ErrorDetails = {}) {
    super(403, message, {}, undefined, details);
    this.name = "ForbiddenError";
  }
}

/** 404: the request names something that does not exist for this caller. */
export class NotFoundError extends HttpError {
  constructor(message: string) {
    super(404, message);
    this.name = "NotFoundError";
  }
}

/** 409: the request conflicts with what is stored (an email already registered). */
export class ConflictError extends HttpError {
  constructor(message: string, options?: ErrorOptions, details: ErrorDetails = {}) {
    super(409, message, {}, options, details);
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
    super("Note has changed since it was read", undefined, { code: noteConflictCode, note: stored });
    this.name = "NoteConflictError";
  }
}

/** 422: an `Idempotency-Key` already used for a create with a different body (draft-ietf-httpapi-idempotency-key-header). */
export class IdempotencyKeyReusedError extends HttpError {
  constructor() {
    super(422, "Idempotency-Key was already used for a different note", {}, undefined, {
      code: idempotencyKeyReusedCode,
    });
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
    super(410, "The changes cursor has expired; sync again from the start", {}, undefined, {
      code: cursorExpiredCode,
    });
    this.name = "CursorExpiredError";
  }
}

/** 415: the body is not of a media type the endpoint reads. */
export class UnsupportedMediaTypeError extends HttpError {
  constructor(message: string) {
    super(415, message);
    this.name = "UnsupportedMediaTypeError";
  }
}

/** 405: the method is not one the endpoint serves; `Allow` lists those it does. */
export class MethodNotAllowedError extends HttpError {
  constructor(allowed: readonly string[]) {
    super(405, "Method not allowed", { Allow: allowed.join(", ") });
    this.name = "MethodNotAllowedError";
  }
}

/** 503: a dependency (the database, or the mail provider's configuration) is not available; the client may retry. */
export class ServiceUnavailableError extends HttpError {
  constructor(options?: ErrorOptions & { message?: string; retryAfter?: number }) {
    const retryAfter = String(options?.retryAfter ?? 5);
    super(503, options?.message ?? "Service temporarily unavailable", { "Retry-After": retryAfter }, options);
    this.name = "ServiceUnavailableError";
  }
}

/** 429: a brute-force limit is reached; `Retry-After` says in how many seconds it lifts. */
export class TooManyRequestsError extends HttpError {
  constructor(message: string, retryAfterSeconds: number) {
    super(429, message, { "Retry-After": String(retryAfterSeconds) });
    this.name = "TooManyRequestsError";
  }
}

/** 413: the body is larger than the endpoint accepts. */
export class PayloadTooLargeError extends HttpError {
  constructor(maxBytes: number) {
    super(413, `Request body must be at most ${maxBytes} bytes`);
    this.name = "PayloadTooLargeError";
  }
}

/** 408: the body did not arrive in time after the request's headers; reading it was stopped. */
export class RequestTimeoutError extends HttpError {
  constructor() {
    super(408, "Request body took too long to arrive", { Connection: "close" });
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
    super(499, "Client closed the request", {}, options);
    this.name = "ClientAbortedError";
  }
}
