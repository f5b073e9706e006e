/**
 * The one error the typed client throws: for an answer that is not a success,
 * and for a service that could not be reached at all (`status` 0).
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
import type {
  AuthErrorEnvelope,
  FieldProblem,
  Note,
  NotesErrorEnvelope,
} from "../supabase/functions/_shared/contract.ts";

/** What a {@link NotesApiError} is made of. */
export interface NotesApiErrorInit {
  /** The HTTP status of the answer, or 0 when no answer came. */
  status: number;
  message: string;
  envelope?: AuthErrorEnvelope | NotesErrorEnvelope;
  requestId?: string;
  retryAfter?: number;
  cause?: unknown;
}

/** A failed API call: the HTTP status, the API's own message, and the error envelope it came in. */
export class NotesApiError extends Error {
  /** The HTTP status of the answer; 0 when the service could not be reached (offline, DNS, CORS, refused). */
  readonly status: number;
  /** The error envelope as received; undefined when the answer carried none (e.g. a proxy's page). */
  readonly envelope: AuthErrorEnvelope | NotesErrorEnvelope | undefined;
  /** The `x-request-id` of the answer, to find it in the server's log. */
  readonly requestId: string | undefined;
  /** On a 429 or 503: seconds to wait before trying again, from `Retry-After`. */
  readonly retryAfter: number | undefined;

  constructor(init: NotesApiErrorInit) {
    super(
      init.message,
      init.cause === undefined ? undefined : { cause: init.cause },
    );
    this.name = "NotesApiError";
    this.status = init.status;
    this.envelope = init.envelope;
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
  }

  /**
   * The API's machine-readable reason, when it gives one. On a notes 401:
   * `token_expired` or `token_revoked` (log in again), `token_missing`, or
   * `token_invalid` (a bug: the token was mangled or not one of ours).
   */
  get code(): string | undefined {
    return this.envelope?.code;
  }

  /**
   * On a 409 with `code` `note_conflict`: the note as it is stored now, newer
   * than the version the save or delete named. Show it beside the user's
   * version ("keep mine" saves again naming its `updatedAt`).
   */
  get note(): Note | undefined {
    return this.envelope && "note" in this.envelope ? this.envelope.note : undefined;
  }

  /** On a 400: every problem found, each with the field it concerns, to show beside a form's inputs. */
  get fields(): readonly FieldProblem[] {
    return this.envelope?.fields ?? [];
  }
}
