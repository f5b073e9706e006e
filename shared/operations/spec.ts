/** What an operation of the API is made of, and the words and statuses many of them share. */
import type { z } from "zod";
import type { EnvelopeKind } from "../../supabase/functions/_shared/contract/mod.ts";

/**
 * The events of a `text/event-stream` answer (WHATWG HTML, server-sent events), by event name: the schema of each
 * event's `data` (one line of JSON) and what it means.
 */
export type StreamEvents = Readonly<Record<string, { data: z.ZodType; description: string }>>;

/**
 * A browser navigation's answer: a redirect (302) whose `Location` is where the browser goes next. It has no body;
 * `location` says where it points and what its query carries.
 */
export interface RedirectSuccess {
  status: 302;
  location: string;
}

/** One operation of the API: where it lives, what it takes and what it answers. */
export interface OperationSpec {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** The Supabase function serving it, below `/functions/v1`. */
  functionName: string;
  /** The interface's own path for auth operations (`/auth/login`), served by the `auth` function. */
  interfacePath?: string;
  envelope: EnvelopeKind;
  /**
   * An auth operation that acts for a signed-in user: it takes the bearer token beside the `apikey`;
   * `"optional"`: it takes the token when there is one (verify-email, where it proves the account).
   */
  bearer?: true | "optional";
  /**
   * A browser navigates here (a provider sign-in's start and its callback): it takes no `apikey` and no token, is
   * reached by its URL alone, and answers a redirect. Errors are still JSON, with no `Location`.
   */
  browserNavigation?: true;
  /** Served only to a caller whose account is an ADMIN now (else 403 `admin_required`). */
  admin?: true;
  /** A path below the function's own, which its router serves (`/events` of `admin-users`). */
  subpath?: string;
  summary: string;
  description: string;
  body?: z.ZodType;
  query?: z.ZodObject;
  /** The parameters written `{name}` in the path (the provider of a callback), each a string. */
  pathParameters?: z.ZodObject;
  /** Optional request headers the operation reads, beyond `Authorization`/`apikey` and `Content-Type`. */
  headers?: readonly { name: string; schema: z.ZodType; description: string }[];
  /** A JSON answer's success envelope around `data`, a stream of server-sent `events`, or a redirect. */
  success: { status: number; data: z.ZodType } | { status: number; events: StreamEvents } | RedirectSuccess;
  /** Every error status the operation can answer, each in the operation's error envelope. */
  errors: readonly number[];
}

/** The request header that names the last event received, to resume a stream after it (as EventSource sends it). */
export const lastEventIdHeader = "Last-Event-ID";

// Statuses every operation can answer: wrong method, unexpected failure, database unavailable.
export const always = [405, 500, 503] as const;
// Statuses of any JSON body: invalid, not arrived within the deadline, too large, not JSON.
export const bodyErrors = [400, 408, 413, 415] as const;

// A session that has not made the second step gets 403 mfa_required from every notes and account call but a few.
export const secondStepNeeded =
  " A session of an account with an active second factor that has not made the second step " +
  "(POST /auth/mfa/verify or /auth/mfa/recover) gets 403 mfa_required.";
export const codeRules =
  "A code is the authenticator's 6 digits for the current 30-second step (one step either side is " +
  "accepted, so ±30 s of clock drift) and is accepted once: a step already used is refused. 5 wrong codes lock the " +
  "factor for 15 minutes for every caller and every session (429 with Retry-After), the right code included; 100 " +
  "wrong codes in a row lock it until the password is reset (403 second_factor_locked), and the owner is mailed " +
  "at the first lock of a day. A recovery code is accepted once; a used one sent again is refused without counting. ";

// What change-password and delete-account ask of an account that may have no password (one a provider made).
export const freshProof = (field: string) =>
  `${field} may be left out only by a session that gave a proof with POST /auth/reauthenticate within the last 5 ` +
  "minutes (a session's age is no proof); otherwise leaving it out is a 400 naming the field (an account made by a " +
  "provider has no password until it sets one with a reset code).";

// Where a provider sign-in or link sends the browser back, and what it must be.
export const returnRules = (field: string) =>
  `${field} must be an absolute URL of the app listed in the service's OAUTH_REDIRECT_URLS, exactly as listed, ` +
  "query included (RFC 9700 4.1.3: exact string matching; an added query is refused).";

export const adminOnly =
  "Only for a caller whose account is an ADMIN when the request arrives (the role is read from " +
  "the database on every request; a token issued before a revocation is refused with 403 admin_required). ";
