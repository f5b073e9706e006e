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
