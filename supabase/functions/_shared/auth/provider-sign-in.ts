/**
 * The OpenID Connect relying party, through `openid-client` (by the author of
 * jose): each provider's discovery document read once per isolate, the
 * authorization URL of a new flow (PKCE S256, `state`, `nonce`), and the
 * callback's code exchanged for an ID token whose signature is checked against
 * the provider's published keys and whose `iss`, `aud`, `exp` and `nonce` are
 * checked. What the functions keep of a flow and a completed sign-in are keyed
 * hashes of its state and one-time code, so a copy of the tables opens none.
 *
 * @example
 * ```ts
 * const flow = await beginProviderSignIn(provider, settings);
 * // ... the browser comes back to the callback with ?state=&code= ...
 * const claims = await finishProviderSignIn(provider, settings, callbackQuery, flow);
 * ```
 */
import * as oidc from "openid-client";
import type { IdentityProviderSettings, ProviderSignInSettings } from "../config/mod.ts";
import { email } from "../contract/accounts.ts";
import { limits } from "../contract/common.ts";
import { ServiceUnavailableError } from "../http/errors.ts";
import { hexMac } from "./derived-keys.ts";

/** How long a provider may take to answer one request of a sign-in. */
const providerTimeoutSeconds = 10;

/** The discovered configuration of each provider, by name; a failed discovery is forgotten, so the next try redoes it. */
const configurations = new Map<string, Promise<oidc.Configuration>>();

function configurationOf(provider: IdentityProviderSettings): Promise<oidc.Configuration> {
  let configuration = configurations.get(provider.name);
  if (!configuration) {
    configuration = oidc.discovery(
      provider.issuer,
      provider.clientId,
      { client_secret: provider.clientSecret },
      oidc.ClientSecretBasic(provider.clientSecret),
      {
        timeout: providerTimeoutSeconds,
        execute: [
          // Plain http only reaches here for a provider the settings allowed (OIDC_ALLOW_HTTP, a local one).
          ...(provider.issuer.protocol === "http:" ? [oidc.allowInsecureRequests] : []),
          // Without this, openid-client trusts the ID token of the TLS-protected token response unsigned-checked;
          // the issue asks for the signature against the provider's keys, whatever the channel.
          oidc.enableNonRepudiationChecks,
        ],
      },
    );
    configurations.set(provider.name, configuration);
    configuration.catch(() => configurations.delete(provider.name));
  }
  return configuration;
}

/** What a new flow stores (10 minutes, single use) and where it sends the browser. */
export interface ProviderFlow {
  /** The provider's authorization URL, carrying `state`, the PKCE challenge and `nonce`. */
  url: URL;
  stateHash: string;
  codeVerifier: string;
  nonce: string;
}

/** How a flow's `state` is stored and found: its HMAC under a key of the server's. */
export function stateHashOf(jwtSecret: Uint8Array, state: string): Promise<string> {
  return hexMac(jwtSecret, "provider sign-in state", state);
}

/** How a completed sign-in's one-time code is stored and found. */
export function signInCodeHashOf(jwtSecret: Uint8Array, code: string): Promise<string> {
  return hexMac(jwtSecret, "provider sign-in code", code);
}

/** The PKCE S256 challenge of an app's `verifier` (RFC 7636), as the app sent it to authorize. */
export function challengeOf(verifier: string): Promise<string> {
  return oidc.calculatePKCECodeChallenge(verifier);
}

/** A new one-time code: 256 random bits, base64url. */
export function newSignInCode(): string {
  return oidc.randomState();
}

/**
 * Starts a flow at `provider`: the URL to send the browser to, and what the callback will need. A provider whose
 * discovery document cannot be read is a 503, tried again at the next request. A flow for a proof
 * (`reauthenticate`) asks the provider to sign the person in again whatever session it holds (`prompt=login`,
 * `max_age=0`, OpenID Connect Core 3.1.2.1), so a stolen app session cannot ride on a provider session.
 */
export async function beginProviderSignIn(
  provider: IdentityProviderSettings,
  settings: Pick<ProviderSignInSettings, "callbackUrl">,
  jwtSecret: Uint8Array,
  options: { reauthenticate?: boolean } = {},
): Promise<ProviderFlow> {
  const configuration = await configurationOf(provider).catch((error) => {
    throw new ServiceUnavailableError({
      message: `${provider.name} cannot be reached; try again shortly`,
      cause: error,
    });
  });
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(configuration, {
    redirect_uri: settings.callbackUrl!,
    scope: "openid email profile",
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: "S256",
    state,
    nonce,
    ...(options.reauthenticate ? { prompt: "login", max_age: "0" } : {}),
  });
  return { url, stateHash: await stateHashOf(jwtSecret, state), codeVerifier, nonce };
}

/**
 * What the ID token says of its person: `email` only when it is an address an account could hold (as registering
 * takes one), and the name a new account takes: the provider's, else the address's part before `@`.
 */
export interface ProviderClaims {
  issuer: string;
  subject: string;
  email: string | undefined;
  emailVerified: boolean;
  name: string;
}

/** The name a new account of these claims takes, within the names accounts take. */
function accountName(claim: unknown, email: string | undefined): string {
  const given = typeof claim === "string" ? claim.trim().slice(0, limits.nameMaxChars) : "";
  return given || email?.split("@")[0].slice(0, limits.nameMaxChars) || "User";
}

/**
 * Exchanges the callback's code (with the flow's PKCE verifier) and checks the ID token; throws openid-client's
 * error for anything wrong: the provider's `error=`, a foreign `iss`, a spent code, a bad signature, a wrong nonce.
 * The callback's query is read against the public callback URL, which is the `redirect_uri` the code was issued to,
 * whatever URL the gateway handed the function.
 */
export async function finishProviderSignIn(
  provider: IdentityProviderSettings,
  settings: Pick<ProviderSignInSettings, "callbackUrl">,
  callbackQuery: URLSearchParams,
  flow: {
    state: string;
    codeVerifier: string;
    nonce: string;
    reauthenticate?: boolean;
  },
): Promise<ProviderClaims> {
  const configuration = await configurationOf(provider);
  const current = new URL(settings.callbackUrl!);
  current.search = callbackQuery.toString();
  const tokens = await oidc.authorizationCodeGrant(configuration, current, {
    pkceCodeVerifier: flow.codeVerifier,
    expectedState: flow.state,
    expectedNonce: flow.nonce,
    idTokenExpected: true,
    // A proof needs a sign-in made now: the ID token's auth_time within the clock tolerance (30 s) of the exchange.
    ...(flow.reauthenticate ? { maxAge: 0 } : {}),
  });
  const claims = tokens.claims()!;
  const address = email.safeParse(claims.email);
  const usable = address.success ? address.data : undefined;
  return {
    issuer: claims.iss,
    subject: claims.sub,
    email: usable,
    // Apple sends the string "true".
    emailVerified: claims.email_verified === true || claims.email_verified === "true",
    name: accountName(claims.name, usable),
  };
}
