/**
 * The two response envelopes of interface.md. Auth endpoints answer
 * `{success, statusCode, message, data}` or `{statusCode, message}`; notes
 * endpoints answer `{message, success, data}` or `{error, success: false}`.
 * Error envelopes may also carry `code` and `fields` (see `ErrorDetails`).
 *
 * @example
 * ```ts
 * return notesSuccess(201, "Note created successfully", note);
 * ```
 */
import type { AuthErrorEnvelope, EnvelopeKind, ErrorDetails, NotesErrorEnvelope } from "./contract.ts";

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json; charset=utf-8" },
  });
}

/** Auth success envelope; `statusCode` repeats the HTTP status. */
export function authSuccess(status: number, message: string, data: object): Response {
  return json(status, { success: true, statusCode: status, message, data });
}

/** Notes success envelope. */
export function notesSuccess(status: number, message: string, data: object): Response {
  return json(status, { message, success: true, data });
}

/** The error envelope of `kind` with `message`, and `details` after the envelope's own fields. */
export function errorResponse(
  kind: EnvelopeKind,
  status: number,
  message: string,
  details: ErrorDetails = {},
): Response {
  const body: AuthErrorEnvelope | NotesErrorEnvelope = kind === "auth"
    ? { statusCode: status, message, ...details }
    : { error: message, success: false, ...details };
  return json(status, body);
}
