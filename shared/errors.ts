/**
 * The one error the typed client throws for an answer that is not a success.
 *
 * @example
 * ```ts
 * try {
 *   await client.login({ email, password });
 * } catch (error) {
 *   if (error instanceof NotesApiError && error.status === 401) showMessage(error.message);
 * }
 * ```
 */
import type { AuthErrorEnvelope, NotesErrorEnvelope } from "../supabase/functions/_shared/contract.ts";

/** A failed API call: the HTTP status, the API's own message, and the error envelope it came in. */
export class NotesApiError extends Error {
  constructor(
    /** The HTTP status of the answer. */
    readonly status: number,
    /** The API's words: the auth envelope's `message` or the notes envelope's `error`. */
    message: string,
    /** The error envelope as received; undefined when the answer carried none (e.g. a proxy's page). */
    readonly envelope: AuthErrorEnvelope | NotesErrorEnvelope | undefined,
    /** The `x-request-id` of the answer, to find it in the server's log. */
    readonly requestId: string | undefined,
  ) {
    super(message);
    this.name = "NotesApiError";
  }
}
