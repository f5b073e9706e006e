/** The second factor (an authenticator app, recovery codes) and the proofs that the owner is at the keyboard. */
import {
  activateBody,
  activation,
  enrollBody,
  enrollment,
  factorList,
  identityLinkStart,
  reauthenticateBody,
  reauthenticateWithProviderBody,
  reauthentication,
  recoverBody,
  recovery,
  recoveryCodes,
  recoveryCodesBody,
  session,
  unenrollBody,
  unenrolled,
  verifyFactorBody,
} from "../../supabase/functions/_shared/contract/mod.ts";
import { always, bodyErrors, codeRules, type OperationSpec, returnRules, secondStepNeeded } from "./spec.ts";

/** Their operations, keyed by the typed client's names for them. */
export const secondFactorOperations = {
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
      "whoever registered it keep the account after its owner's reset. An anonymous account is 403 " +
      "sign_up_required: it signs up first." + secondStepNeeded,
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
} as const satisfies Record<string, OperationSpec>;
