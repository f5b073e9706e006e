/**
 * The two response envelopes of interface.md. Auth endpoints answer
 * `{success, statusCode, message, data}` or `{statusCode, message}`; notes
 * endpoints answer `{message, success, data}` or `{error, success: false}`.
 *
 * @example
 * ```ts
 * return notesSuccess(201, "Note created successfully", note);
 * ```
 */
import type { AuthErrorEnvelope, NotesErrorEnvelope } from "./contract.ts";

/** Which envelope an endpoint speaks. */
export type EnvelopeKind = "auth" | "notes";

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

/** The error envelope of `kind` with `message`. */
export function errorResponse(kind: EnvelopeKind, status: number, message: string): Response {
  const body: AuthErrorEnvelope | NotesErrorEnvelope = kind === "auth"
    ? { statusCode: status, message }
    : { error: message, success: false };
  return json(status, body);
}
