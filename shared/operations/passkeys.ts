/** Passkeys (WebAuthn): registering one, signing in with one, the second step with one, and managing them. */
import {
  passkeyAnswer,
  passkeyList,
  passkeyLoginBody,
  passkeyOptions,
  passkeyOptionsBody,
  passkeyQuery,
  registerPasskeyBody,
  removedPasskey,
  renamePasskeyBody,
  session,
} from "../../supabase/functions/_shared/contract/mod.ts";
import { always, bodyErrors, type OperationSpec, secondStepNeeded } from "./spec.ts";

const proofNeeded = "It needs a session that proved its owner within the last 5 minutes with POST " +
  "/auth/reauthenticate (the password, a code of the authenticator app, or another passkey), else 403 " +
  "reauthentication_required: a session's age or level alone is not enough, so a stolen token cannot plant its " +
  "thief's passkey.";

const signedUpOnly = " An anonymous account is 403 sign_up_required: it signs up first.";

const challengeRules = "The challenge inside the options is good for one answer, for 5 minutes; options are " +
  "rate-limited per address (429 with Retry-After).";

/** Their operations, keyed by the typed client's names for them. */
export const passkeyOperations = {
  passkeysRegisterOptions: {
    method: "POST",
    functionName: "auth-passkeys-register-options",
    interfacePath: "/auth/passkeys/register/options",
    envelope: "auth",
    bearer: true,
    summary: "Start registering a passkey",
    description: "Answers WebAuthn creation options (data.options, as PublicKeyCredential." +
      "parseCreationOptionsFromJSON takes them) for a new passkey of the signed-in account: discoverable, user " +
      "verification required, attestation none, none of the account's passkeys again (excludeCredentials). " +
      proofNeeded + signedUpOnly + " An account with 10 passkeys gets 409 passkey_limit_reached. " + challengeRules +
      secondStepNeeded,
    body: passkeyOptionsBody,
    success: { status: 200, data: passkeyOptions },
    errors: [...bodyErrors, 401, 403, 409, 429, ...always],
  },
  passkeysRegister: {
    method: "POST",
    functionName: "auth-passkeys-register",
    interfacePath: "/auth/passkeys/register",
    envelope: "auth",
    bearer: true,
    summary: "Register a passkey",
    description: "Takes the browser's new credential (credential.toJSON() after navigator.credentials.create() with " +
      "the options of /auth/passkeys/register/options) and an optional name (else the authenticator's, or " +
      '"Passkey"), verifies it and stores it. ' + proofNeeded + signedUpOnly +
      " An answer that does not verify (no user " +
      "verification, another origin or relying party, a challenge unknown, used, expired or of another session) " +
      "is 400 passkey_invalid; a credential registered already is 409 passkey_exists; the 11th is 409 " +
      "passkey_limit_reached. The owner is mailed and the security log records it.",
    body: registerPasskeyBody,
    success: { status: 201, data: passkeyAnswer },
    errors: [...bodyErrors, 401, 403, 409, ...always],
  },
  passkeysLoginOptions: {
    method: "POST",
    functionName: "auth-passkeys-login-options",
    interfacePath: "/auth/passkeys/login/options",
    envelope: "auth",
    bearer: "optional",
    summary: "Start a passkey sign-in",
    description: "Answers WebAuthn request options (data.options, as PublicKeyCredential." +
      "parseRequestOptionsFromJSON takes them). Without a token: a usernameless sign-in, no account named, which " +
      'the browser can also offer in the email field\'s autofill (conditional UI, mediation: "conditional"). ' +
      "With a session's token: a ceremony of that session, restricted to its account's passkeys " +
      "(allowCredentials): the second step of a password sign-in whose mfaRequired is true (POST " +
      "/auth/passkeys/login with the same token), or a proof for POST /auth/reauthenticate {passkey}. " +
      challengeRules,
    body: passkeyOptionsBody,
    success: { status: 200, data: passkeyOptions },
    errors: [...bodyErrors, 401, 429, ...always],
  },
  passkeysLogin: {
    method: "POST",
    functionName: "auth-passkeys-login",
    interfacePath: "/auth/passkeys/login",
    envelope: "auth",
    bearer: "optional",
    summary: "Sign in with a passkey, or make the second step with one",
    description: "Takes the browser's assertion (credential.toJSON() after navigator.credentials.get() with the " +
      "options of /auth/passkeys/login/options). Without a token: signs in and answers a session as login does " +
      "(refresh token, device token) at aal2 with amr passkey: a passkey that verified its user proves two " +
      "factors, so an account with an authenticator app is not asked for a code on top (mfaRequired false). " +
      "With the token of a session whose mfaRequired is true: completes the second step as a code does; that " +
      "session ends and the answered one takes its place (amr password, passkey). Anything wrong (an unknown " +
      "credential, a signature that does not verify, no user verification, a used or expired challenge, a " +
      "device-bound key whose signature counter went back, which is also logged as a cloned key) is 401 " +
      "passkey_rejected; a wrong signature of a known credential counts toward the account's cap of failed " +
      "sign-ins as a wrong password does. A suspended account is 403 account_suspended.",
    body: passkeyLoginBody,
    success: { status: 200, data: session },
    errors: [...bodyErrors, 401, 403, ...always],
  },
  passkeysList: {
    method: "GET",
    functionName: "auth-passkeys",
    interfacePath: "/auth/passkeys",
    envelope: "auth",
    bearer: true,
    summary: "The account's passkeys",
    description: "The caller's passkeys, oldest first: name, when added and last used, whether it is synced across " +
      "the owner's devices, and the authenticator's name from its AAGUID where it is known." + secondStepNeeded,
    success: { status: 200, data: passkeyList },
    errors: [400, 401, 403, ...always],
  },
  passkeysRename: {
    method: "PATCH",
    functionName: "auth-passkeys",
    interfacePath: "/auth/passkeys",
    envelope: "auth",
    bearer: true,
    summary: "Rename a passkey",
    description: "Renames one of the caller's passkeys (1 to 100 characters); another account's id, or none, is " +
      "404 passkey_not_found." + secondStepNeeded,
    query: passkeyQuery,
    body: renamePasskeyBody,
    success: { status: 200, data: passkeyAnswer },
    errors: [...bodyErrors, 401, 403, 404, ...always],
  },
  passkeysRemove: {
    method: "DELETE",
    functionName: "auth-passkeys",
    interfacePath: "/auth/passkeys",
    envelope: "auth",
    bearer: true,
    summary: "Remove a passkey",
    description: "Removes one of the caller's passkeys. " + proofNeeded + " The account's last way to sign in " +
      "(no password, no linked provider, no other passkey) is 409 last_sign_in_method; another account's id is " +
      "404 passkey_not_found. The owner is mailed.",
    query: passkeyQuery,
    success: { status: 200, data: removedPasskey },
    errors: [400, 401, 403, 404, 409, ...always],
  },
} as const satisfies Record<string, OperationSpec>;
