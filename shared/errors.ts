/**
 * The one error the typed client throws: for an answer that is not a success,
 * and for a service that could not be reached at all (`status` 0). Its `code`
 * says why, typed: the API's own codes (docs/errors.md), and the client's for
 * failures that carry no error envelope.
 *
 * @example
 * ```ts
 * try {
 *   await client.login({ email, password });
 * } catch (error) {
 *   if (error instanceof NotesApiError && error.code === "invalid_credentials") showMessage(error.message);
 * }
 * ```
 */
import type {
  AuthErrorEnvelope,
  ErrorCode,
  FieldProblem,
  Note,
  NotesErrorEnvelope,
} from "../supabase/functions/_shared/contract/mod.ts";

/**
 * The codes the client gives failures that no error envelope explains: no
 * answer (`network_error`), no answer within `timeoutMs` (`timeout`), the
 * caller's own `signal` aborted (`aborted`), an answer outside the contract
 * (`unexpected_response`, e.g. a proxy's error page), or a call that acts
 * for a signed-in user made with no session, so nothing was sent
 * (`not_signed_in`, status 401).
 */
export const clientErrorCodes = [
  "network_error",
  "timeout",
  "aborted",
  "unexpected_response",
  "not_signed_in",
] as const;
export type ClientErrorCode = (typeof clientErrorCodes)[number];

/** Every `code` a {@link NotesApiError} can carry: the API's, then the client's own. */
export type NotesApiErrorCode = ErrorCode | ClientErrorCode;

/** What a {@link NotesApiError} is made of. */
export interface NotesApiErrorInit {
  /** The HTTP status of the answer, or 0 when no answer came. */
  status: number;
  /** The envelope's `code`, or the client's own when the answer carried no envelope. */
  code: NotesApiErrorCode;
  message: string;
  envelope?: AuthErrorEnvelope | NotesErrorEnvelope;
  requestId?: string;
  retryAfter?: number;
  cause?: unknown;
}

/** A failed API call: the HTTP status, the API's own message, and the error envelope it came in. */
export class NotesApiError extends Error {
  /** The HTTP status of the answer; 0 when no answer came (offline, DNS, CORS, refused, timed out, aborted). */
  readonly status: number;
  /**
   * Why, for an app to decide on rather than the message: one of the API's
   * codes, each with a fixed status (`note_conflict` carries `note`; a call
   * whose session ended throws the refused refresh's code, `session_revoked`,
   * `session_expired`, ..., the error `onUnauthorized` was given), or one of
   * {@link clientErrorCodes} (`timeout`: no answer within `timeoutMs`;
   * `not_signed_in`: no session, nothing sent).
   */
  readonly code: NotesApiErrorCode;
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
    this.code = init.code;
    this.envelope = init.envelope;
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
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
