/** The account and its sessions: register, log in and out, refresh, passwords, verification, the user. */
import {
  changePasswordBody,
  createPasswordBody,
  currentUser,
  deleteAccountBody,
  deletedAccount,
  endedSession,
  endSessionQuery,
  loggedOut,
  loginBody,
  logoutBody,
  passwordResetRequested,
  refreshBody,
  registerBody,
  requestPasswordResetBody,
  resendVerificationBody,
  securityEventList,
  securityEventsQuery,
  sendSignInCodeBody,
  session,
  sessionList,
  signInCodeSent,
  signInWithCodeBody,
  verificationRequested,
  verifyEmailBody,
} from "../../supabase/functions/_shared/contract/mod.ts";
import { always, bodyErrors, freshProof, type OperationSpec, secondStepNeeded } from "./spec.ts";

/** Their operations, keyed by the typed client's names for them. */
export const accountOperations = {
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
  sendSignInCode: {
    method: "POST",
    functionName: "auth-otp",
    interfacePath: "/auth/otp",
    envelope: "auth",
    summary: "Email a sign-in code",
    description: "Mails an 8-digit code (valid 10 minutes, single use; a new one ends the last) to the email if " +
      "it has an active account; nothing is sent for an unknown one. The answer is the same either way, in text " +
      "and in timing. Where the service creates accounts by code (OTP_SIGN_UP, off by default), an address no " +
      "account holds is mailed a code that creates its account. One mail a minute and a few a day per address; " +
      "limited per client address.",
    body: sendSignInCodeBody,
    success: { status: 200, data: signInCodeSent },
    errors: [...bodyErrors, 401, 429, ...always],
  },
  signInWithCode: {
    method: "POST",
    functionName: "auth-otp-verify",
    interfacePath: "/auth/otp/verify",
    envelope: "auth",
    summary: "Sign in with an emailed code",
    description: "Signs in as a login does (refresh token, device token; mfaRequired when the account has a " +
      "second factor) and marks the address verified; an account whose address was unproven goes back to its " +
      "owner as after a reset. A wrong, used, superseded or expired code, or an unknown email, is a 400 " +
      "invalid_code; a suspended account is a 403; 10 wrong codes for an email in an hour, or too many attempts " +
      "from one address, get 429 with Retry-After. With OTP_SIGN_UP, a code mailed to an address no account " +
      "held creates the account, verified by the code and named name (else the address's local part), and " +
      'signs it in (message "Account created"); name is ignored for an existing account.',
    body: signInWithCodeBody,
    success: { status: 200, data: session },
    errors: [...bodyErrors, 401, 403, 429, ...always],
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
} as const satisfies Record<string, OperationSpec>;
