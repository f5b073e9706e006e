/**
 * Every operation of the API in one table: where it lives, what it takes and
 * what it answers, in the contract's schemas. The typed client calls through
 * it and the OpenAPI document is generated from it, so the two cannot drift.
 *
 * @example
 * ```ts
 * import { operations } from "./operations.ts";
 * const { method, functionName } = operations.createNote; // "POST", "notes-create"
 * ```
 */
import type { z } from "zod";
import {
  accountEventsQuery,
  activateBody,
  activation,
  callbackPathParameters,
  changeList,
  changePasswordBody,
  completeLinkBody,
  createNoteBody,
  createPasswordBody,
  currentUser,
  deleteAccountBody,
  deletedAccount,
  deletedNote,
  deleteNoteQuery,
  endedSession,
  endSessionQuery,
  enrollBody,
  enrollment,
  type EnvelopeKind,
  factorList,
  getNoteQuery,
  idempotencyKey,
  idempotencyKeyHeader,
  identity,
  identityLinkStart,
  identityList,
  limits,
  linkAuthorizeQuery,
  linkIdentityBody,
  listChangesQuery,
  listNotesQuery,
  listUsersQuery,
  loggedOut,
  loginBody,
  logoutBody,
  managedUserList,
  note,
  noteChange,
  noteList,
  oauthAuthorizeQuery,
  oauthCallbackQuery,
  oauthTokenBody,
  passwordResetRequested,
  providerSignInErrors,
  reauthenticateBody,
  reauthenticateWithProviderBody,
  reauthentication,
  recoverBody,
  recovery,
  recoveryCodes,
  recoveryCodesBody,
  refreshBody,
  registerBody,
  requestPasswordResetBody,
  resendVerificationBody,
  saveNoteBody,
  securityEventList,
  securityEventsQuery,
  session,
  sessionList,
  setUserStatusBody,
  streamChangesQuery,
  streamReady,
  streamReset,
  unenrollBody,
  unenrolled,
  unlinkedIdentity,
  unlinkIdentityQuery,
  verificationRequested,
  verifyEmailBody,
  verifyFactorBody,
} from "../supabase/functions/_shared/contract/mod.ts";

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

export interface OperationSpec {
  method: "GET" | "POST" | "DELETE";
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
const always = [405, 500, 503] as const;
// Statuses of any JSON body: invalid, not arrived within the deadline, too large, not JSON.
const bodyErrors = [400, 408, 413, 415] as const;

// A session that has not made the second step gets 403 mfa_required from every notes and account call but a few.
const secondStepNeeded = " A session of an account with an active second factor that has not made the second step " +
  "(POST /auth/mfa/verify or /auth/mfa/recover) gets 403 mfa_required.";
const codeRules = "A code is the authenticator's 6 digits for the current 30-second step (one step either side is " +
  "accepted, so ±30 s of clock drift) and is accepted once: a step already used is refused. 5 wrong codes lock the " +
  "factor for 15 minutes for every caller and every session (429 with Retry-After), the right code included; 100 " +
  "wrong codes in a row lock it until the password is reset (403 second_factor_locked), and the owner is mailed " +
  "at the first lock of a day. A recovery code is accepted once; a used one sent again is refused without counting. ";

// What change-password and delete-account ask of an account that may have no password (one a provider made).
const freshProof = (field: string) =>
  `${field} may be left out only by a session that gave a proof with POST /auth/reauthenticate within the last 5 ` +
  "minutes (a session's age is no proof); otherwise leaving it out is a 400 naming the field (an account made by a " +
  "provider has no password until it sets one with a reset code).";

// Where a provider sign-in or link sends the browser back, and what it must be.
const returnRules = (field: string) =>
  `${field} must be an absolute URL of the app listed in the service's OAUTH_REDIRECT_URLS, exactly as listed, ` +
  "query included (RFC 9700 4.1.3: exact string matching; an added query is refused).";

const adminOnly = "Only for a caller whose account is an ADMIN when the request arrives (the role is read from " +
  "the database on every request; a token issued before a revocation is refused with 403 admin_required). ";

/** The API's operations, keyed by the typed client's method names. */
export const operations = {
  register: {
    method: "POST",
    functionName: "auth-register",
    interfacePath: "/auth/register",
    envelope: "auth",
    summary: "Register an account",
    description: "Creates a STANDARD_USER account and signs it in. An email already registered is a 409; " +
      "too many sign-ups from one address get 429 with Retry-After.",
    body: registerBody,
    success: { status: 201, data: session },
    errors: [...bodyErrors, 401, 409, 429, ...always],
  },
  login: {
    method: "POST",
    functionName: "auth-login",
    interfacePath: "/auth/login",
    envelope: "auth",
    summary: "Log in",
    description: "Checks the password, starts a session and answers with the user, an access token valid for " +
      "2 hours and the session's refresh token. " +
      "A wrong password and an unknown email get the same 401; a suspended account gets 403; too many " +
      "failed attempts for an email from one address, or attempts from one address, get 429 with Retry-After.",
    body: loginBody,
    success: { status: 200, data: session },
    errors: [...bodyErrors, 401, 403, 429, ...always],
  },
  requestPasswordReset: {
    method: "POST",
    functionName: "auth-request-password-reset",
    interfacePath: "/auth/request-password-reset",
    envelope: "auth",
    summary: "Request a password reset code",
    description: "Mails a 6-digit code (valid 15 minutes, 5 attempts, single use) to the email if it has an " +
      "account. The answer is the same either way, in text and in timing. Limited per client address.",
    body: requestPasswordResetBody,
    success: { status: 200, data: passwordResetRequested },
    errors: [...bodyErrors, 401, 429, ...always],
  },
  createPassword: {
    method: "POST",
    functionName: "auth-create-password",
    interfacePath: "/auth/create-password",
    envelope: "auth",
    summary: "Set a password with a reset code",
    description: "Sets the password, marks the account verified and signs the user in. An unknown email is a " +
      "404; a wrong, expired or used code is a 400; a suspended account is a 403; too many attempts from one " +
      "address, or too many wrong codes for the account, get 429 with Retry-After.",
    body: createPasswordBody,
    success: { status: 200, data: session },
    errors: [...bodyErrors, 401, 403, 404, 429, ...always],
  },
  refreshSession: {
    method: "POST",
    functionName: "auth-refresh",
    interfacePath: "/auth/refresh",
    envelope: "auth",
    summary: "Refresh the session",
    description: "Trades the refresh token for a new access token and the session's next refresh token, which " +
      "replaces it. The token just replaced still answers the same for a few seconds (concurrent tabs and " +
      "retries converge); used after that, or an older one at any time, it is 401 refresh_token_reused and the " +
      "session ends. Other 401 codes: refresh_token_invalid, session_expired, session_revoked. Too many " +
      "refreshes from one address get 429 with Retry-After.",
    body: refreshBody,
    success: { status: 200, data: session },
    errors: [...bodyErrors, 401, 429, ...always],
  },
  signOut: {
    method: "POST",
    functionName: "auth-logout",
    interfacePath: "/auth/logout",
    envelope: "auth",
    bearer: true,
    summary: "Sign out",
    description: "Ends the caller's session (scope local, the default; the body may be omitted), every other " +
      "session of the account (others) or all of them (global). Their access and refresh tokens are refused " +
      "from their next use. A session that has not made the second step of an account with an active " +
      "second factor may end only itself (scope local); others and global get 403 mfa_required.",
    body: logoutBody,
    success: { status: 200, data: loggedOut },
    errors: [...bodyErrors, 401, 403, ...always],
  },
  listSessions: {
    method: "GET",
    functionName: "auth-sessions",
    interfacePath: "/auth/sessions",
    envelope: "auth",
    bearer: true,
    summary: "List the account's sessions",
    description: "The account's live sessions, the most recently refreshed first; the caller's own is current." +
      secondStepNeeded,
    success: { status: 200, data: sessionList },
    errors: [400, 401, 403, ...always],
  },
  revokeSession: {
    method: "DELETE",
    functionName: "auth-sessions",
    interfacePath: "/auth/sessions",
    envelope: "auth",
    bearer: true,
    summary: "End one session",
    description: "Ends one live session of the caller's account; its tokens are refused from their next use. " +
      "Another user's session, an ended one, or an id that is no session is a 404." + secondStepNeeded,
    query: endSessionQuery,
    success: { status: 200, data: endedSession },
    errors: [400, 401, 403, 404, ...always],
  },
  verifyEmail: {
    method: "POST",
    functionName: "auth-verify-email",
    interfacePath: "/auth/verify-email",
    envelope: "auth",
    bearer: "optional",
    summary: "Verify the email address",
    description: "Marks the address verified with the 6-digit code mailed at sign-up (valid 24 hours, 5 tries, " +
      "single use) and signs the user in, as login answers. The code proves the mailbox; the request must also " +
      "prove the account, with the account's access token (the app it signed up in) or its password: a code " +
      "alone is 401 credentials_required and changes nothing, a wrong password 401 invalid_credentials (counted " +
      "as a failed login). A wrong, used, expired or burned code gets 400 naming code; a suspended account 403; " +
      "too many calls from one address, or too many failed passwords, 429.",
    body: verifyEmailBody,
    success: { status: 200, data: session },
    errors: [...bodyErrors, 401, 403, 429, ...always],
  },
  resendVerification: {
    method: "POST",
    functionName: "auth-resend-verification",
    interfacePath: "/auth/resend-verification",
    envelope: "auth",
    summary: "Mail a new verification code",
    description: "Mails a new code to an account whose address is not verified yet, at most once a minute and 5 " +
      "times a day. The answer is the same 200 for every address; too many calls from one address get 429.",
    body: resendVerificationBody,
    success: { status: 200, data: verificationRequested },
    errors: [...bodyErrors, 401, 429, ...always],
  },
  changePassword: {
    method: "POST",
    functionName: "auth-change-password",
    interfacePath: "/auth/change-password",
    envelope: "auth",
    bearer: true,
    summary: "Change the password",
    description: "Sets a new password for the signed-in user who knows the current one, and answers a fresh " +
      "session, as login. Every other session and token of the account is refused from its next request. A wrong " +
      "current password is 401 invalid_credentials and counts toward the login limits (429 past them). " +
      freshProof("currentPassword") + secondStepNeeded,
    body: changePasswordBody,
    success: { status: 200, data: session },
    errors: [...bodyErrors, 401, 403, 429, ...always],
  },
  deleteAccount: {
    method: "POST",
    functionName: "auth-delete-account",
    interfacePath: "/auth/delete-account",
    envelope: "auth",
    bearer: true,
    summary: "Delete the account",
    description: "Erases the signed-in user's account, its notes, sessions, codes and queued mails in one " +
      "transaction; the password is re-entered. A wrong password is 401 invalid_credentials, counts toward the " +
      "login limits (429 past them) and deletes nothing. The address can then register again. " +
      freshProof("password") + secondStepNeeded,
    body: deleteAccountBody,
    success: { status: 200, data: deletedAccount },
    errors: [...bodyErrors, 401, 403, 429, ...always],
  },
  getUser: {
    method: "GET",
    functionName: "auth-user",
    interfacePath: "/auth/user",
    envelope: "auth",
    bearer: true,
    summary: "The signed-in user",
    description: "The caller's user record, while the session holds.",
    success: { status: 200, data: currentUser },
    errors: [400, 401, ...always],
  },
  listSecurityEvents: {
    method: "GET",
    functionName: "auth-events",
    interfacePath: "/auth/events",
    envelope: "auth",
    bearer: true,
    summary: "The account's security events",
    description: "The caller's own security events (sign-ups, sign-ins and failed ones, password changes, " +
      "sessions started and ended, suspensions, ...), newest first, a page at a time: pass the last id seen " +
      "as before. An event an admin caused names the admin as actorId, without its address or user agent. " +
      "Kept 90 days by default." + secondStepNeeded,
    query: securityEventsQuery,
    success: { status: 200, data: securityEventList },
    errors: [400, 401, 403, ...always],
  },
  mfaEnroll: {
    method: "POST",
    functionName: "auth-mfa-enroll",
    interfacePath: "/auth/mfa/enroll",
    envelope: "auth",
    bearer: true,
    summary: "Start enrolling a second factor",
    description: "Starts an authenticator-app factor (TOTP) for the signed-in user, with the password re-entered " +
      "(a wrong one is 401 invalid_credentials and counts toward the login limits, 429 past them). Answers the " +
      "pending factor's id, an otpauth URL to show as a QR code and the same secret in base32 to type by hand; " +
      "they are answered this once. The factor does nothing until its first code activates it; a new enrolment " +
      "replaces a pending one, and an account with an active factor gets 409 factor_exists (remove it first). " +
      "The address must be verified (else 403 email_not_verified): a factor added while it is unproven would let " +
      "whoever registered it keep the account after its owner's reset." + secondStepNeeded,
    body: enrollBody,
    success: { status: 201, data: enrollment },
    errors: [...bodyErrors, 401, 403, 409, 429, ...always],
  },
  mfaActivate: {
    method: "POST",
    functionName: "auth-mfa-activate",
    interfacePath: "/auth/mfa/activate",
    envelope: "auth",
    bearer: true,
    summary: "Activate the second factor with its first code",
    description: "Activates the pending factor with a code of the authenticator app and answers a new session that " +
      "has made the second step, as login answers, with 10 recovery codes: each works once instead of a code, " +
      "and they are shown this once. A wrong code is 400 invalid_code; a factor that is not the caller's pending " +
      "one is 404 factor_not_found. " + codeRules + "From then on every sign-in of the account needs the second step.",
    body: activateBody,
    success: { status: 200, data: activation },
    errors: [...bodyErrors, 401, 403, 404, 429, ...always],
  },
  mfaVerify: {
    method: "POST",
    functionName: "auth-mfa-verify",
    interfacePath: "/auth/mfa/verify",
    envelope: "auth",
    bearer: true,
    summary: "Make the second step of a sign-in with a code",
    description: "Takes a session whose mfaRequired is true and a code of the " +
      "authenticator app, and answers a new session that has made the second step, as login answers; the " +
      "first session ends and the new one takes its place. A wrong code is 400 invalid_code; an account without an " +
      "active factor is 404 factor_not_found. " + codeRules.trimEnd(),
    body: verifyFactorBody,
    success: { status: 200, data: session },
    errors: [...bodyErrors, 401, 403, 404, 429, ...always],
  },
  mfaRecover: {
    method: "POST",
    functionName: "auth-mfa-recover",
    interfacePath: "/auth/mfa/recover",
    envelope: "auth",
    bearer: true,
    summary: "Make the second step of a sign-in with a recovery code",
    description: "As verify, with one of the recovery codes instead of a code, for a user without the authenticator " +
      "app. Each recovery code works once; the answer says how many remain (recoveryCodesLeft). A wrong or used " +
      "recovery code is 400 invalid_code and counts toward the same lock as wrong codes (5 lock the factor 15 " +
      "minutes, 429 with Retry-After); an account without an active factor is 404 factor_not_found.",
    body: recoverBody,
    success: { status: 200, data: recovery },
    errors: [...bodyErrors, 401, 403, 404, 429, ...always],
  },
  mfaList: {
    method: "GET",
    functionName: "auth-mfa",
    interfacePath: "/auth/mfa",
    envelope: "auth",
    bearer: true,
    summary: "The account's second factors",
    description: "The caller's factors (at most one active, or one pending enrolment), each with when it was made " +
      "and last used, and how many unused recovery codes remain." + secondStepNeeded,
    success: { status: 200, data: factorList },
    errors: [400, 401, 403, ...always],
  },
  mfaUnenroll: {
    method: "POST",
    functionName: "auth-mfa-unenroll",
    interfacePath: "/auth/mfa/unenroll",
    envelope: "auth",
    bearer: true,
    summary: "Remove the second factor",
    description: "Removes the account's factor and its recovery codes. It needs a session that has made the second " +
      "step (else 403 mfa_required) and, in the body, a current code or one recovery code (exactly one of the " +
      "two), so a stolen token alone cannot. Every other session of the account ends. A wrong code is 400 " +
      "invalid_code; a factorId that is not the account's factor is 404 factor_not_found. " + codeRules.trimEnd(),
    body: unenrollBody,
    success: { status: 200, data: unenrolled },
    errors: [...bodyErrors, 401, 403, 404, 429, ...always],
  },
  reauthenticate: {
    method: "POST",
    functionName: "auth-reauthenticate",
    interfacePath: "/auth/reauthenticate",
    envelope: "auth",
    bearer: true,
    summary: "Prove it is the owner before changing how the account signs in",
    description: "Takes exactly one proof: the password, a current code of the authenticator app, or one recovery " +
      "code (which it uses up). The session may then, for 5 minutes, unlink an identity, link one without the " +
      "password, and (an account without a password) set one or delete the account; the answer says until when. " +
      "A session's age is no proof. A wrong password is 401 invalid_credentials and counts toward the session's " +
      "re-entry limit (429 past it); a wrong code is 400 invalid_code; a code for an account without an active " +
      "factor is 404 factor_not_found. " + codeRules.trimEnd() + secondStepNeeded,
    body: reauthenticateBody,
    success: { status: 200, data: reauthentication },
    errors: [...bodyErrors, 401, 403, 404, 429, ...always],
  },
  reauthenticateWithProvider: {
    method: "POST",
    functionName: "auth-reauthenticate-provider",
    interfacePath: "/auth/reauthenticate/provider",
    envelope: "auth",
    bearer: true,
    summary: "Prove it is the owner by signing in again at a linked provider",
    description: "For an account that signs in with a provider (one without a password, above all): answers the " +
      "provider's URL; navigate the browser there (location.assign). The provider asks the person to sign in again " +
      "whatever session it holds (prompt=login, max_age=0). When an identity of this account signs in there, the " +
      "callback records the proof on this session for 5 minutes (as POST /auth/reauthenticate) and returns the " +
      "browser to redirectTo with reauthenticated=<provider>; another identity is error=identity_not_linked, and " +
      "an ended session error=link_expired. An account with no identity of that provider is 404 " +
      "identity_not_found. " + returnRules("redirectTo") + " Starts count toward the per-address sign-in limit (429)." +
      secondStepNeeded,
    body: reauthenticateWithProviderBody,
    success: { status: 200, data: identityLinkStart },
    errors: [...bodyErrors, 401, 403, 404, 429, ...always],
  },
  mfaRecoveryCodes: {
    method: "POST",
    functionName: "auth-mfa-recovery-codes",
    interfacePath: "/auth/mfa/recovery-codes",
    envelope: "auth",
    bearer: true,
    summary: "Replace the recovery codes",
    description: "Answers 10 new recovery codes, shown this once; the old ones stop working. It needs a session " +
      "that has made the second step (else 403 mfa_required) and a current code or one recovery code (exactly " +
      "one of the two). Every other session of the account ends. A wrong code is 400 invalid_code; an account " +
      "without an active factor is 404 factor_not_found. " + codeRules.trimEnd(),
    body: recoveryCodesBody,
    success: { status: 200, data: recoveryCodes },
    errors: [...bodyErrors, 401, 403, 404, 429, ...always],
  },
  oauthAuthorize: {
    method: "GET",
    functionName: "auth-oauth-authorize",
    interfacePath: "/auth/oauth/authorize",
    envelope: "auth",
    browserNavigation: true,
    summary: "Start a sign-in with a provider (browser navigation)",
    description: "Navigate the browser here (location.assign or a link; no apikey, no fetch) to sign in with a " +
      "configured OpenID Connect provider. It answers 302 to the provider's sign-in page and sets a cookie on this " +
      "origin (HttpOnly, SameSite=Lax, Secure over https, sent only to the provider's callback) that binds the " +
      "sign-in to this browser (RFC 9700 4.7.1): the provider returns the browser to GET " +
      "/auth/oauth/callback/{provider}, which goes on only in the browser holding that cookie, and sends it on to " +
      "redirect_to with a one-time code (exchange it with POST /auth/oauth/token) or an error. " +
      returnRules("redirect_to") + " code_challenge and code_challenge_method=S256 are required (PKCE, RFC 7636; " +
      "RFC 9700 2.1.1): code_challenge is the base64url of the SHA-256 of a random verifier the app keeps, e.g. in " +
      "sessionStorage, and the code signs in only with that verifier. The typed client sends them. The sign-in " +
      "must complete within 10 minutes. A provider that is not configured, a redirect_to not allowed, or a " +
      "missing code_challenge is a 400 naming the field, as JSON with no Location: show it rather than " +
      "navigating. Starts count in a counter of their own per address, with the login's limit " +
      "(LOGIN_MAX_ATTEMPTS_PER_ADDRESS in LOGIN_ADDRESS_WINDOW_SECONDS; logins do not use it up, nor starts " +
      "the logins' attempts): 429 with Retry-After. A provider that cannot be reached is a 503.",
    query: oauthAuthorizeQuery,
    success: {
      status: 302,
      location: "The provider's authorization URL (authorization code flow with PKCE S256, state and nonce).",
    },
    errors: [400, 429, ...always],
  },
  oauthCallback: {
    method: "GET",
    functionName: "auth-oauth-callback",
    interfacePath: "/auth/oauth/callback/{provider}",
    envelope: "auth",
    browserNavigation: true,
    summary: "The provider's return (browser navigation)",
    description: "Register this URL (the functions' base URL + /auth/oauth/callback/ + the provider's name in " +
      "OIDC_PROVIDERS, e.g. /auth/oauth/callback/google) as the redirect URI at each provider: one per provider, " +
      "so that no provider's code is ever sent to another (mix-up, RFC 9700 4.4). Apps never call it. It takes " +
      "the provider's query as the provider sends it (state, code or error, iss, and parameters of the " +
      "provider's own, which are accepted); iss is required where the provider's metadata says it sends it " +
      "(RFC 9207). A missing, unknown or already used state, a state of another provider's sign-in, or a " +
      "callback in another browser than the one that started the sign-in or link (its cookie missing) is 400 " +
      "invalid_state, as JSON with no redirect, and the sign-in or link is spent. Otherwise it answers 302 to the " +
      "redirect_to of the sign-in or link, with exactly one outcome added to its query: code (a sign-in; a " +
      "one-time code for POST /auth/oauth/token, valid 60 seconds), link_code (a link; a one-time code for POST " +
      "/auth/identities/link/complete by the session that asked, valid 60 seconds), linked=<provider> (the " +
      "identity was this account's already: nothing to complete), reauthenticated=<provider> (a proof asked " +
      "with POST /auth/reauthenticate/provider is recorded on the session that asked), or error and " +
      `error_description (nothing happened; error is one of ${providerSignInErrors.join(", ")}). ` +
      "identity_not_linked means an account with the provider's email exists: sign in to it the usual way, then " +
      "link the provider from settings. No token travels in a URL.",
    query: oauthCallbackQuery,
    pathParameters: callbackPathParameters,
    success: {
      status: 302,
      location: "The app's redirect_to, its own query kept, with code=<one-time code>, link_code=<one-time code>, " +
        "linked=<provider>, or error=<code>&error_description=<text> (replacing any earlier value of these five).",
    },
    errors: [400, ...always],
  },
  oauthToken: {
    method: "POST",
    functionName: "auth-oauth-token",
    interfacePath: "/auth/oauth/token",
    envelope: "auth",
    summary: "Exchange a provider sign-in's one-time code for a session",
    description: "Takes the code that the callback put in the app's URL (remove it from the URL, e.g. with " +
      "history.replaceState) and answers a session exactly as login does: an account with an active second " +
      "factor gets mfaRequired true and makes the second step next. Send codeVerifier, the PKCE verifier whose " +
      "code_challenge started the sign-in (required: without it, a 400 naming it). The code works once, within " +
      "60 seconds; an unknown, used or expired code, one of a suspended account, or a wrong codeVerifier (which " +
      "spends the code) is 400 invalid_code: start the sign-in again.",
    body: oauthTokenBody,
    success: { status: 200, data: session },
    errors: [...bodyErrors, 401, ...always],
  },
  listIdentities: {
    method: "GET",
    functionName: "auth-identities",
    interfacePath: "/auth/identities",
    envelope: "auth",
    bearer: true,
    summary: "The account's linked provider identities",
    description: "The providers the account can sign in with (each with the address the provider last stated " +
      "and when it was last used), and hasPassword: whether the account can also log in with a password (false " +
      "for an account a provider made, until it sets one with a reset code)." + secondStepNeeded,
    success: { status: 200, data: identityList },
    errors: [400, 401, 403, ...always],
  },
  linkIdentity: {
    method: "POST",
    functionName: "auth-identities-link",
    interfacePath: "/auth/identities/link",
    envelope: "auth",
    bearer: true,
    summary: "Start linking a provider to the account",
    description: "Answers the URL to navigate the browser to (location.assign): GET " +
      "/auth/identities/link/authorize of this service, which binds the link to that browser and sends it on to " +
      "the provider. After the user signs " +
      "in at the provider, the callback returns the browser to redirectTo with link_code: send it with POST " +
      "/auth/identities/link/complete from this same session to link the identity (a link URL opened in another " +
      "browser links nothing); or with linked=<provider> (already this account's), or with error " +
      "(identity_already_linked: it belongs to another account; link_expired: the session ended meanwhile). " +
      returnRules("redirectTo") + " Link starts count with sign-in starts, per address. The password is needed " +
      "unless this session gave a proof with POST /auth/reauthenticate within the last 5 minutes: without it, a 400 " +
      "naming password (ask for it, or reauthenticate, and call again); a wrong one is 401 invalid_credentials and " +
      "counts toward the session's " +
      "re-entry limit (429 past it). A provider that is not configured, or a redirectTo not allowed, is a 400 " +
      "naming the field." + secondStepNeeded,
    body: linkIdentityBody,
    success: { status: 200, data: identityLinkStart },
    errors: [...bodyErrors, 401, 403, 429, ...always],
  },
  linkIdentityAuthorize: {
    method: "GET",
    functionName: "auth-identities-link-authorize",
    interfacePath: "/auth/identities/link/authorize",
    envelope: "auth",
    browserNavigation: true,
    summary: "A link's browser step (browser navigation)",
    description: "The url that POST /auth/identities/link answered points here: navigate the browser to it " +
      "(no apikey, no token). It binds the link to this browser with a cookie, as a sign-in's start does (the " +
      "callback goes on only in this browser), and answers 302 to the provider. It works once, by the first " +
      "browser to come, within the link's 10 minutes: otherwise 400 invalid_state, as JSON with no Location " +
      "(start the link again). A provider that cannot be reached is a 503.",
    query: linkAuthorizeQuery,
    success: {
      status: 302,
      location: "The provider's authorization URL (authorization code flow with PKCE S256, state and nonce).",
    },
    errors: [400, ...always],
  },
  completeLink: {
    method: "POST",
    functionName: "auth-identities-link-complete",
    interfacePath: "/auth/identities/link/complete",
    envelope: "auth",
    bearer: true,
    summary: "Complete a link with the link_code of the app's URL",
    description: "Links the provider identity whose link_code the callback put in the app's URL (remove it from " +
      "the URL), for the session that asked for the link (POST /auth/identities/link) only, and mails the user. " +
      "Answers the linked identity. The code works once, within 60 seconds; an unknown, used or expired code, or " +
      "one of a link another session asked for (which it spends), is 400 invalid_code: link again. An identity " +
      "that another account linked meanwhile is 409 identity_already_linked." + secondStepNeeded,
    body: completeLinkBody,
    success: { status: 200, data: identity },
    errors: [...bodyErrors, 401, 403, 409, ...always],
  },
  unlinkIdentity: {
    method: "DELETE",
    functionName: "auth-identities",
    interfacePath: "/auth/identities",
    envelope: "auth",
    bearer: true,
    summary: "Unlink a provider identity",
    description: "Removes one of the account's identities: that provider no longer signs in to it. Another " +
      "account's identity, or an id that is none, is 404 identity_not_found. The account's last way to sign in " +
      "(no password and no other identity) is 409 last_sign_in_method: set a password (reset code) or link " +
      "another provider first. It needs a proof given with POST /auth/reauthenticate within the last 5 minutes by " +
      "this session (else 403 reauthentication_required), so a stolen token cannot remove the owner's way in; the " +
      "owner is mailed." + secondStepNeeded,
    query: unlinkIdentityQuery,
    success: { status: 200, data: unlinkedIdentity },
    errors: [400, 401, 403, 404, 409, ...always],
  },
  listUsers: {
    method: "GET",
    functionName: "admin-users",
    envelope: "auth",
    bearer: true,
    admin: true,
    summary: "List accounts (admin)",
    description: adminOnly + "Accounts newest first, filtered by query (part of the email or name, " +
      "case-insensitively) and status, with each one's note count and last activity; never a note's title " +
      "or content.",
    query: listUsersQuery,
    success: { status: 200, data: managedUserList },
    errors: [400, 401, 403, ...always],
  },
  setUserStatus: {
    method: "POST",
    functionName: "admin-users",
    envelope: "auth",
    bearer: true,
    admin: true,
    summary: "Suspend or reactivate an account, or remove its second factor (admin)",
    description: adminOnly + "With status: SUSPENDED ends every session and token of the account from its next " +
      "request and makes login answer 403; ACTIVE lets it log in again. An admin's own id is a 400, and so is " +
      "suspending an ADMIN (an operator revokes the role first); an unknown id is a 404. With removeMfa: true " +
      "instead, removes the account's second factor and its recovery codes, for a user who lost both (after " +
      "checking who asks), ends the account's sessions and mails its owner; an account without one is 404 " +
      "factor_not_found. An admin's own factor (400 cannot_remove_own_factor: unenroll it with a code) and another " +
      "admin's (400 cannot_remove_admin_factor: an operator removes it) are refused.",
    body: setUserStatusBody,
    success: { status: 200, data: currentUser },
    errors: [...bodyErrors, 401, 403, 404, ...always],
  },
  listAccountEvents: {
    method: "GET",
    functionName: "admin-users",
    subpath: "/events",
    envelope: "auth",
    bearer: true,
    admin: true,
    summary: "An account's security events (admin)",
    description: adminOnly + "The security events of the account id, newest first, a page at a time " +
      "(before = the last id seen). An id that names no account lists none.",
    query: accountEventsQuery,
    success: { status: 200, data: securityEventList },
    errors: [400, 401, 403, ...always],
  },
  createNote: {
    method: "POST",
    functionName: "notes-create",
    envelope: "notes",
    summary: "Create a note",
    description: "Creates a note owned by the caller. At least one of title or content is required; an omitted " +
      "one is stored as an empty string. Status defaults to DRAFT. With an Idempotency-Key, a repeat of the same " +
      `create within ${limits.idempotencyKeyHours} hours answers the same 201 with the note the first one made and ` +
      "makes nothing (a concurrent repeat waits for the first); the same key with a different body is a 422 " +
      "(code idempotency_key_reused). Keys belong to their user." + secondStepNeeded,
    body: createNoteBody,
    headers: [{
      name: idempotencyKeyHeader,
      schema: idempotencyKey,
      description: `1 to ${limits.idempotencyKeyMaxChars} visible ASCII characters chosen by the client, one per ` +
        "note it means to create (a UUID does); send the same key when retrying that create",
    }],
    success: { status: 201, data: note },
    errors: [...bodyErrors, 401, 403, 422, ...always],
  },
  getNote: {
    method: "GET",
    functionName: "notes-get",
    envelope: "notes",
    summary: "Read one note",
    description: "One of the caller's notes as it is stored now. Another user's note, no note, or a malformed id " +
      "is a 404." + secondStepNeeded,
    query: getNoteQuery,
    success: { status: 200, data: note },
    errors: [400, 401, 403, 404, ...always],
  },
  listNotes: {
    method: "GET",
    functionName: "notes-fetch",
    envelope: "notes",
    summary: "List the caller's notes",
    description: "One page of the caller's notes, newest first (createdAt, or updatedAt with order=updatedAt, " +
      "then id, descending), with the total that match. status keeps one status; q keeps notes that contain " +
      "every word of it in the title or content, in any order, ignoring case and diacritics, each word matching " +
      `the start of a word. An unknown parameter or value, or a q over ${limits.searchMaxChars} characters, is a 400.` +
      secondStepNeeded,
    query: listNotesQuery,
    success: { status: 200, data: noteList },
    errors: [400, 401, 403, ...always],
  },
  listChanges: {
    method: "GET",
    functionName: "notes-changes",
    envelope: "notes",
    summary: "What changed in the caller's notes",
    description: "The caller's notes that changed after the cursor `since`, oldest change first, each at most " +
      "once as it is now, and each note deleted since as a tombstone {id, deleted: true}; without since, every " +
      "current note. Send data.cursor as since for what follows; hasMore says whether more follow right away. " +
      "Nothing written while a client pages is skipped. Deletions are kept NOTES_TOMBSTONE_DAYS (30 by default): " +
      "a cursor that needs an older one is a 410 with code cursor_expired (sync again without since). A cursor " +
      "that is not one this service gave the caller is a 400." + secondStepNeeded,
    query: listChangesQuery,
    success: { status: 200, data: changeList },
    errors: [400, 401, 403, 410, ...always],
  },
  streamChanges: {
    method: "GET",
    functionName: "notes-stream",
    envelope: "notes",
    summary: "Watch the caller's notes change, live",
    description: "A stream of server-sent events (text/event-stream): each change of the caller's notes after the " +
      "cursor as a change event, in order, as notes-changes shows it; then one ready event once caught up, and " +
      "from then on each change as it happens. Without a cursor it starts at the feed's current end. A cursor is " +
      "notes-changes' data.cursor or the id of any event of this stream; the Last-Event-ID header, which " +
      "EventSource sends when it reconnects, wins over since. A cursor that needs deletions no longer kept gets a " +
      "reset event and the stream ends: sync again with notes-changes without since, and do not reconnect with " +
      "that cursor. Comment lines keep the connection alive at least every 15 s. The server ends every stream " +
      "after STREAM_MAX_SECONDS (120 by default), when the access token expires, when the session ends and at " +
      "shutdown, sending a retry line before a planned end: reconnect with the last event id and nothing is lost " +
      "(a session that ended is then a 401). Errors before the stream starts are JSON, as for the other notes " +
      "operations; a cursor that is not one this service gave the caller is a 400 invalid_cursor, and an account " +
      "with STREAM_MAX_PER_USER streams open (10 by default) gets a 429 rate_limited for the next, with " +
      "Retry-After." + secondStepNeeded,
    query: streamChangesQuery,
    headers: [{
      name: lastEventIdHeader,
      schema: streamChangesQuery.shape.since.unwrap(),
      description: "the id of the last event received, to resume after it; wins over since",
    }],
    success: {
      status: 200,
      events: {
        change: {
          data: noteChange,
          description: "a note as it is now, or the tombstone {id, deleted: true} of a deleted one; the event's id " +
            "is the cursor just after this change",
        },
        ready: {
          data: streamReady,
          description: "sent once per connection, when every missed change has been sent; live from then on",
        },
        reset: {
          data: streamReset,
          description: "the cursor is older than the kept deletions; the stream ends (sync again without since)",
        },
      },
    },
    errors: [400, 401, 403, 429, ...always],
  },
  saveNote: {
    method: "POST",
    functionName: "notes-save",
    envelope: "notes",
    summary: "Update a note",
    description: "Changes the given fields of one of the caller's notes and answers with the updated note, whose " +
      "updatedAt is strictly later than before. With expectedUpdatedAt (the updatedAt last read), a note changed " +
      "since is left as it is and answered 409 with code note_conflict and the stored note. Another user's note, " +
      "or no note, is a 404. Repeating a save is safe." + secondStepNeeded,
    body: saveNoteBody,
    success: { status: 200, data: note },
    errors: [...bodyErrors, 401, 403, 404, 409, ...always],
  },
  deleteNote: {
    method: "DELETE",
    functionName: "notes-delete",
    envelope: "notes",
    summary: "Delete a note",
    description: "Deletes one of the caller's notes and answers with its id. With expectedUpdatedAt, a note " +
      "changed since is kept and answered 409 with code note_conflict and the stored note. Another user's note, " +
      "or no note, is a 404 (so is a repeated delete: the note is gone either way)." + secondStepNeeded,
    query: deleteNoteQuery,
    success: { status: 200, data: deletedNote },
    errors: [400, 401, 403, 404, 409, ...always],
  },
} as const satisfies Record<string, OperationSpec>;

export type OperationName = keyof typeof operations;

/** The operations that answer a JSON envelope: every one but the event streams and the browser navigations. */
export type JsonOperationName = {
  [K in OperationName]: (typeof operations)[K]["success"] extends { data: z.ZodType } ? K : never;
}[OperationName];

/** The path, below the functions' base URL, that clients call and the OpenAPI document lists for `spec`. */
export function pathOf(spec: OperationSpec): string {
  return spec.interfacePath ?? `/${spec.functionName}${spec.subpath ?? ""}`;
}
