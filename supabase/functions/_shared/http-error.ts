/**
 * Typed HTTP errors. Handlers throw these; `endpoint.ts` turns them into the
 * auth or notes envelope in exactly one place.
 *
 * @example
 * ```ts
 * throw new NotFoundError("Note not found");
 * ```
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "HttpError";
  }
}

/** 400: the request names a field or parameter that is missing or invalid. */
export class BadRequestError extends HttpError {
  constructor(message: string) {
    super(400, message);
    this.name = "BadRequestError";
  }
}

/** 401: missing or invalid credentials or token. */
export class UnauthorizedError extends HttpError {
  constructor(message: string) {
    super(401, message);
    this.name = "UnauthorizedError";
  }
}

/** 403: the caller is known but not allowed (a suspended account). */
export class ForbiddenError extends HttpError {
  constructor(message: string) {
    super(403, message);
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
  constructor(message: string) {
    super(409, message);
    this.name = "ConflictError";
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
  constructor(options?: ErrorOptions & { message?: string }) {
    super(503, options?.message ?? "Service temporarily unavailable", { "Retry-After": "5" }, options);
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
