/** Anonymous accounts: a visitor's account with no email or password, and its sign-up under the same id. */
import {
  mergeAnonymousBody,
  mergedAnonymous,
  requestUpgradeCodeBody,
  session,
  signInCodeSent,
  upgradeAnonymousBody,
  upgradeWithCodeBody,
} from "../../supabase/functions/_shared/contract/mod.ts";
import { always, bodyErrors, type OperationSpec } from "./spec.ts";

/** Their operations, keyed by the typed client's names for them. */
export const anonymousOperations = {
  signInAnonymously: {
    method: "POST",
    functionName: "auth-anonymous",
    interfacePath: "/auth/anonymous",
    envelope: "auth",
    summary: "Start an anonymous account",
    description: 'Creates an account with no email and no password (payload.isAnonymous true, email ""; the ' +
      "token's is_anonymous claim true) and signs it in as login does (refresh and device tokens). It writes notes " +
      "as any account, up to 100 (then 403 sign_up_required), and adds no second factor or passkey until it signs " +
      "up. Too many from one address (ANONYMOUS_MAX_PER_ADDRESS, 30 an hour) get 429 with Retry-After. No body.",
    success: { status: 201, data: session },
    errors: [400, 401, 429, ...always],
  },
  upgradeAnonymous: {
    method: "POST",
    functionName: "auth-anonymous-upgrade",
    interfacePath: "/auth/anonymous/upgrade",
    envelope: "auth",
    bearer: true,
    summary: "Sign up the anonymous account",
    description: "Gives the signed-in anonymous account a name, an email and a password, keeping its id and so " +
      "every note; a code to verify the address is mailed as at sign-up. The anonymous session goes on as the " +
      "real account (its refresh answers isAnonymous false); the answer is a new session as login's. An email " +
      "that has an account is 409 email_taken and nothing changes; an account that is not anonymous is 409 " +
      "not_anonymous.",
    body: upgradeAnonymousBody,
    success: { status: 200, data: session },
    errors: [...bodyErrors, 401, 403, 409, ...always],
  },
  sendUpgradeCode: {
    method: "POST",
    functionName: "auth-anonymous-upgrade-code",
    interfacePath: "/auth/anonymous/upgrade/code",
    envelope: "auth",
    bearer: true,
    summary: "Email the anonymous account a code to sign up with",
    description: "The signed-in anonymous account names the address it will sign up with, and an 8-digit code " +
      "(valid 10 minutes; a new one ends the last) is mailed there, to give to /auth/anonymous/upgrade/verify: " +
      "no password to make up. An email that has an account is 409 email_taken and nothing is sent; an account " +
      "that is not anonymous is 409 not_anonymous. One mail a minute and a few a day per account and per " +
      "address, else 429 with Retry-After; requests share the sign-in codes' per-client-address limit.",
    body: requestUpgradeCodeBody,
    success: { status: 200, data: signInCodeSent },
    errors: [...bodyErrors, 401, 403, 409, 429, ...always],
  },
  upgradeAnonymousWithCode: {
    method: "POST",
    functionName: "auth-anonymous-upgrade-verify",
    interfacePath: "/auth/anonymous/upgrade/verify",
    envelope: "auth",
    bearer: true,
    summary: "Sign up the anonymous account with an emailed code",
    description: "Gives the signed-in anonymous account a name and the address the code of " +
      "/auth/anonymous/upgrade/code was mailed to, keeping its id and so every note. The code proves the address " +
      "(isVerified true); the account has no password (request-password-reset sets one). The anonymous session " +
      "goes on as the real account; the answer is a new session as login's. A wrong, used or expired code, or " +
      "one mailed to another address, is 400 invalid_code; 10 wrong codes for an address in an hour get 429 " +
      "with Retry-After; an address registered since the code was mailed is 409 email_taken and nothing changes.",
    body: upgradeWithCodeBody,
    success: { status: 200, data: session },
    errors: [...bodyErrors, 401, 403, 409, 429, ...always],
  },
  mergeAnonymous: {
    method: "POST",
    functionName: "auth-anonymous-merge",
    interfacePath: "/auth/anonymous/merge",
    envelope: "auth",
    bearer: true,
    summary: "Merge an anonymous account's notes into this one",
    description: "Signed in to an existing account (after an upgrade was refused with email_taken), names the " +
      "anonymous session by its access token: every note of that account moves into the caller's in one " +
      "transaction (the caller's feed and streams see them as new) and the anonymous account is deleted. A retry " +
      "moves nothing (moved 0). The token of an account that is not anonymous (or the caller's own) is 409 " +
      "not_anonymous; an anonymous session that has ended is 401 token_revoked; a caller that is anonymous itself is " +
      "403 sign_up_required.",
    body: mergeAnonymousBody,
    success: { status: 200, data: mergedAnonymous },
    errors: [...bodyErrors, 401, 403, 409, ...always],
  },
} as const satisfies Record<string, OperationSpec>;
