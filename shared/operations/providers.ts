/** Sign-in with an OpenID Connect provider, and the providers linked to an account. */
import {
  callbackPathParameters,
  completeLinkBody,
  identity,
  identityLinkStart,
  identityList,
  linkAuthorizeQuery,
  linkIdentityBody,
  oauthAuthorizeQuery,
  oauthCallbackQuery,
  oauthTokenBody,
  providerSignInErrors,
  session,
  unlinkedIdentity,
  unlinkIdentityQuery,
} from "../../supabase/functions/_shared/contract/mod.ts";
import { always, bodyErrors, type OperationSpec, returnRules, secondStepNeeded } from "./spec.ts";

/** Their operations, keyed by the typed client's names for them. */
export const providerOperations = {
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
      "naming the field. An anonymous account needs no password (it has none): the link signs it up; the " +
      "callback refuses an identity without an email (error email_required) or whose email has an account " +
      "(error identity_not_linked: sign in there and merge instead)." + secondStepNeeded,
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
      "that another account linked meanwhile is 409 identity_already_linked. Run by an anonymous account's " +
      "session, the link signs it up under the same id with every note: the identity's email (verified as the " +
      "provider says) and name, isAnonymous false (refresh the session to see it); an email registered since the " +
      "callback is 409 email_taken and nothing changes." + secondStepNeeded,
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
} as const satisfies Record<string, OperationSpec>;
