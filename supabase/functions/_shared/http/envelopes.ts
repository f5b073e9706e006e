/**
 * The two response envelopes of interface.md. Auth endpoints answer
 * `{success, statusCode, message, data}` or `{statusCode, message}`; notes
 * endpoints answer `{message, success, data}` or `{error, success: false}`.
 * Error envelopes also carry a `code` (error-codes.ts), and may carry
 * `fields` and `note` (see `ErrorDetails`).
 *
 * @example
 * ```ts
 * return notesSuccess(201, "Note created successfully", note);
 * ```
 */
import type { AuthErrorEnvelope, EnvelopeKind, ErrorDetails, NotesErrorEnvelope } from "../contract/envelopes.ts";
import { budgetedBody } from "./answer-budget.ts";
import { corsResponseHeaders } from "./cors.ts";
import { type ErrorCode, errorStatuses } from "../contract/error-codes.ts";

/**
 * The headers of every answer of an endpoint of each kind: CORS, no MIME
 * sniffing and, for auth answers (which carry sessions), no caching. Given
 * whole to each `Response`, so no answer has them added one by one.
 */
export const answerHeaders: Readonly<Record<EnvelopeKind, Readonly<Record<string, string>>>> = {
  notes: { ...corsResponseHeaders, "X-Content-Type-Options": "nosniff" },
  auth: { ...corsResponseHeaders, "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store" },
};

const jsonHeaders: Readonly<Record<EnvelopeKind, Readonly<Record<string, string>>>> = {
  notes: { ...answerHeaders.notes, "Content-Type": "application/json; charset=utf-8" },
  auth: { ...answerHeaders.auth, "Content-Type": "application/json; charset=utf-8" },
};

function json(kind: EnvelopeKind, status: number, body: unknown, headers?: Record<string, string>): Response {
  const answer = budgetedBody(JSON.stringify(body));
  if (!answer) {
    return errorResponse(
      kind,
      "service_unavailable",
      "Too many large answers are still being sent; try again shortly",
      {},
      {
        "Retry-After": "1",
      },
    );
  }
  const { body: content, contentLength } = answer;
  const allHeaders = headers ? { ...jsonHeaders[kind], ...headers } : jsonHeaders[kind];
  return new Response(content, {
    status,
    headers: contentLength ? { ...allHeaders, "Content-Length": contentLength } : allHeaders,
  });
}

/** Auth success envelope; `statusCode` repeats the HTTP status. */
export function authSuccess(status: number, message: string, data: object): Response {
  return json("auth", status, { success: true, statusCode: status, message, data });
}

/**
 * 302 to `location`, for a browser navigation (a provider sign-in): never cached, and no `Referer` of this URL, which
 * held the flow's state, goes to the next page.
 */
export function redirectResponse(location: URL): Response {
  return new Response(null, {
    status: 302,
    headers: { ...answerHeaders.auth, Location: location.href, "Referrer-Policy": "no-referrer" },
  });
}

/** Notes success envelope. */
export function notesSuccess(status: number, message: string, data: object): Response {
  return json("notes", status, { message, success: true, data });
}

/**
 * The error envelope of `kind` with `message`, `code` and `details` after the
 * envelope's own fields, and the error's own `headers` (`Retry-After`,
 * `Allow`, ...). The status is the one `code` comes with.
 */
export function errorResponse(
  kind: EnvelopeKind,
  code: ErrorCode,
  message: string,
  details: ErrorDetails = {},
  headers?: Record<string, string>,
): Response {
  const status = errorStatuses[code];
  const body: AuthErrorEnvelope | NotesErrorEnvelope = kind === "auth"
    ? { statusCode: status, message, code, ...details }
    : { error: message, success: false, code, ...details };
  return json(kind, status, body, headers);
}
