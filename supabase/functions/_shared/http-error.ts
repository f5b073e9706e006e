/**
 * Typed HTTP errors. Handlers throw these; `endpoint.ts` turns them into the
 * auth or notes envelope in exactly one place.
 *
 * @example
 * ```ts
 * throw new HttpError(404, "Note not found");
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

/** 405: the method is not one the endpoint serves; `Allow` lists those it does. */
export class MethodNotAllowedError extends HttpError {
  constructor(allowed: readonly string[]) {
    super(405, "Method not allowed", { Allow: allowed.join(", ") });
    this.name = "MethodNotAllowedError";
  }
}

/** 503: the database could not be reached in time; the client may retry. */
export class ServiceUnavailableError extends HttpError {
  constructor(options?: ErrorOptions) {
    super(503, "Service temporarily unavailable", { "Retry-After": "5" }, options);
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
