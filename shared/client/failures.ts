/** The errors a call throws: the API's envelope read into a {@link NotesApiError}, or what went wrong on the way. */
import {
  authErrorEnvelope,
  notesErrorEnvelope,
  tokenErrorCodes,
} from "../../supabase/functions/_shared/contract/mod.ts";
import { NotesApiError } from "../errors.ts";
import type { OperationSpec } from "../operations.ts";

/** A 401 that refused the access token itself (expired, revoked, missing or invalid). */
export function isTokenRefusal(error: unknown): error is NotesApiError {
  return error instanceof NotesApiError && error.status === 401 &&
    (tokenErrorCodes as readonly string[]).includes(error.code);
}

/** What a call that acts for a signed-in user throws when the client holds no session; nothing is sent. */
export function notSignedIn(): NotesApiError {
  return new NotesApiError({ status: 401, code: "not_signed_in", message: "Not signed in" });
}

/**
 * A failure after which a create may or may not have happened and there is
 * time to retry: no answer (but not a deadline passed), or the database
 * unavailable.
 */
export function outcomeUnknown(error: unknown): boolean {
  return error instanceof NotesApiError &&
    (error.code === "network_error" || error.status === 503);
}

/** The error of a request that got no answer, or lost it midway: status 0, code `network_error`. */
export function unreachable(url: URL, cause: unknown): NotesApiError {
  return new NotesApiError({
    status: 0,
    code: "network_error",
    message: `The notes service could not be reached at ${url.origin}`,
    cause,
  });
}

/**
 * A failure that time may mend, after which a watch connects again: no answer
 * (or none in time, or a connection gone silent), a 5xx, or a 429 (the
 * account has as many streams open as it may: one of them may end).
 */

/** The answer's body as JSON, or undefined when it is empty or not JSON. */
export async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A failure after which a refresh may have rotated the token: as for a
 * create, or no answer within the request's own time (the refresh has
 * another request's time left).
 */
export function refreshOutcomeUnknown(error: unknown): boolean {
  return outcomeUnknown(error) || (error instanceof NotesApiError && error.code === "timeout");
}

/** `Retry-After` in seconds: given as seconds, or as an HTTP date. */
function retryAfterOf(response: Response): number | undefined {
  const header = response.headers.get("retry-after");
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

export function failure(
  spec: OperationSpec,
  response: Response,
  payload: unknown,
): NotesApiError {
  const common = {
    status: response.status,
    requestId: response.headers.get("x-request-id") ?? undefined,
    retryAfter: retryAfterOf(response),
  };
  if (spec.envelope === "auth") {
    const parsed = authErrorEnvelope.safeParse(payload);
    if (parsed.success) {
      return new NotesApiError({
        ...common,
        code: parsed.data.code,
        message: parsed.data.message,
        envelope: parsed.data,
      });
    }
  } else {
    const parsed = notesErrorEnvelope.safeParse(payload);
    if (parsed.success) {
      return new NotesApiError({
        ...common,
        code: parsed.data.code,
        message: parsed.data.error,
        envelope: parsed.data,
      });
    }
  }
  // An envelope with a code this client does not know (from a newer server) still keeps the server's words.
  const words = (payload as Record<string, unknown> | null)?.[spec.envelope === "auth" ? "message" : "error"];
  return new NotesApiError({
    ...common,
    code: "unexpected_response",
    message: typeof words === "string" ? words : `Request failed with status ${response.status}`,
  });
}
