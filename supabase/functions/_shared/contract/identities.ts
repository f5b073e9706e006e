/**
 * The contract of sign-in with OpenID Connect providers: starting it (a
 * browser navigation), the provider's callback, exchanging the one-time code
 * it hands the app for a session, and an account's linked identities.
 */
import { z } from "zod";
import { isoTimestamp, text } from "./common.ts";

/** A configured provider's name (`OIDC_PROVIDERS`): lower-case letters, digits and `_`. */
export const providerNamePattern = /^[a-z][a-z0-9_]{0,31}$/;

const providerName = (field: string) =>
  text(field).regex(providerNamePattern, `${field} must be a configured provider's name, e.g. google`);

/** Where the browser returns: exactly one of `OAUTH_REDIRECT_URLS`, query included. */
const returnUrl = (field: string) =>
  text(field).max(2000, `${field} must be at most 2000 characters`).meta({
    description: "an absolute URL of the app listed in OAUTH_REDIRECT_URLS, exactly as listed (query included)",
  });

/** A PKCE S256 challenge: base64url of the SHA-256 of a verifier of 43 to 128 characters. */
const codeChallenge = text("code_challenge").regex(
  /^[A-Za-z0-9_-]{43}$/,
  "code_challenge must be the base64url SHA-256 of the code verifier (43 characters)",
);

/**
 * Query of `GET /auth/oauth/authorize`, which a browser navigates to (no `apikey`). `code_challenge` (PKCE S256,
 * RFC 7636) is required (RFC 9700 2.1.1): the one-time code the app gets back is exchanged only with its verifier,
 * so an attacker's code or callback URL fed to someone else's browser signs nobody in. The typed client sends it.
 */
export const oauthAuthorizeQuery = z.object({
  provider: providerName("provider"),
  redirect_to: returnUrl("redirect_to"),
  code_challenge: codeChallenge,
  code_challenge_method: z.literal("S256", "code_challenge_method must be S256"),
});
export type OAuthAuthorizeQuery = z.infer<typeof oauthAuthorizeQuery>;

/**
 * Query of `GET /auth/identities/link/authorize`, which the browser navigates to with the URL that
 * `POST /auth/identities/link` answered: the link's flow, which this navigation binds to the browser.
 */
export const linkAuthorizeQuery = z.object({
  flow: text("flow").regex(/^[A-Za-z0-9_-]{43}$/, "flow must be the one POST /auth/identities/link answered"),
});
export type LinkAuthorizeQuery = z.infer<typeof linkAuthorizeQuery>;

/**
 * Query of `GET /auth/oauth/callback/{provider}`, as the provider sends it: `state` and `code`, or `state` and `error`. The
 * provider may add parameters of its own (RFC 6749 4.1.2; Google adds `scope`, `authuser`, `prompt`), so this is
 * the one endpoint that takes a query it does not name.
 */
export const oauthCallbackQuery = z.looseObject({
  state: z.string().optional(),
  code: z.string().optional(),
  iss: z.string().optional(),
  error: z.string().optional(),
  error_description: z.string().optional(),
});

/** The path parameter of the callback: the provider whose redirect URI it is (one per provider). */
export const callbackPathParameters = z.object({ provider: providerName("provider") });

/**
 * What the callback puts in `error=` of the app's URL when a sign-in or a link did not complete; no token and no
 * account detail ever travels in a URL.
 */
export const providerSignInErrors = [
  "access_denied",
  "identity_not_linked",
  "identity_already_linked",
  "email_required",
  "account_suspended",
  "link_expired",
  "flow_expired",
  "provider_error",
  "server_error",
] as const;
export type ProviderSignInError = (typeof providerSignInErrors)[number];

/** Body of `POST /auth/oauth/token`: the one-time code of the app's URL (60 seconds, once). */
export const oauthTokenBody = z.object({
  code: text("code").min(1, "code must not be empty").max(100, "code must be at most 100 characters"),
  /** The PKCE verifier whose challenge the sign-in started with. */
  codeVerifier: text("codeVerifier").regex(
    /^[A-Za-z0-9._~-]{43,128}$/,
    "codeVerifier must be 43 to 128 letters, digits and -._~ (RFC 7636)",
  ),
});
export type OAuthTokenBody = z.infer<typeof oauthTokenBody>;

/**
 * Body of `POST /auth/identities/link`: the provider and where the browser returns. `password` is needed unless
 * the session signed in within the last 10 minutes.
 */
export const linkIdentityBody = z.object({
  provider: providerName("provider"),
  redirectTo: returnUrl("redirectTo"),
  password: text("password").optional(),
});
export type LinkIdentityBody = z.infer<typeof linkIdentityBody>;

/** Body of `POST /auth/reauthenticate/provider`: a provider the account has linked, and where to come back. */
export const reauthenticateWithProviderBody = z.object({
  provider: providerName("provider"),
  redirectTo: returnUrl("redirectTo"),
});
export type ReauthenticateWithProviderBody = z.infer<
  typeof reauthenticateWithProviderBody
>;

/**
 * Body of `POST /auth/identities/link/complete`: the `link_code` the callback put in the app's URL (60 seconds,
 * once), sent by the session that asked for the link.
 */
export const completeLinkBody = z.object({
  code: text("code").min(1, "code must not be empty").max(100, "code must be at most 100 characters"),
});
export type CompleteLinkBody = z.infer<typeof completeLinkBody>;

/**
 * `data` of `POST /auth/identities/link`: where to navigate the browser, good for 10 minutes: this service's
 * `GET /auth/identities/link/authorize`, which binds the link to the browser and sends it on to the provider.
 */
export const identityLinkStart = z.object({
  url: z.string().meta({
    description: "navigate the browser here (this service, then the provider); the callback returns to redirectTo",
  }),
});
export type IdentityLinkStart = z.infer<typeof identityLinkStart>;

/** An identity of a provider, linked to the caller's account. */
export const identity = z.object({
  id: z.string(),
  provider: z.string().meta({ description: "the configured provider's name, e.g. google" }),
  email: z.string().nullable().meta({ description: "the address the provider stated at the last sign-in" }),
  createdAt: isoTimestamp,
  lastSignInAt: isoTimestamp.nullable(),
});
export type Identity = z.infer<typeof identity>;

/** `data` of `GET /auth/identities`: the identities, and whether the account has a password too. */
export const identityList = z.object({
  identities: z.array(identity),
  hasPassword: z.boolean().meta({
    description: "false for an account made by a provider sign-in until a password is set with a reset code",
  }),
});
export type IdentityList = z.infer<typeof identityList>;

/** Query of `DELETE /auth/identities`: the identity to unlink. */
export const unlinkIdentityQuery = z.object({
  id: text("id").regex(
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
    "id must be an identity's id",
  ),
});
export type UnlinkIdentityQuery = z.infer<typeof unlinkIdentityQuery>;

/** `data` of `DELETE /auth/identities`: the identity that is gone. */
export const unlinkedIdentity = z.object({ id: z.string() });
export type UnlinkedIdentity = z.infer<typeof unlinkedIdentity>;
