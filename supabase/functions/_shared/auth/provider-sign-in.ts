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
import { type IdentityProviderSettings, providerCallbackUrl, type ProviderSignInSettings } from "../config/mod.ts";
import { ServiceUnavailableError } from "../http/errors.ts";
import { hexMac } from "./derived-keys.ts";
import { claimsOf, type ProviderClaims } from "./provider-claims.ts";

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
  /** Kept only in the browser's URLs; a link hands it to the browser's step that binds the flow. */
  state: string;
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

/** The provider's discovered configuration, or a 503 while its discovery document cannot be read. */
function reachableConfigurationOf(provider: IdentityProviderSettings): Promise<oidc.Configuration> {
  return configurationOf(provider).catch((error) => {
    throw new ServiceUnavailableError({
      message: `${provider.name} cannot be reached; try again shortly`,
      cause: error,
    });
  });
}

/**
 * The provider's authorization URL of a flow: the code flow with PKCE S256, `state` and `nonce`, returning to the
 * provider's own redirect URI. A provider whose discovery document cannot be read is a 503, tried again at the next
 * request. A flow for a proof (`reauthenticate`) asks the provider to sign the person in again whatever session it
 * holds (`prompt=login`, `max_age=0`, OpenID Connect Core 3.1.2.1), so a stolen app session cannot ride on a
 * provider session.
 */
export async function authorizationUrlOf(
  provider: IdentityProviderSettings,
  settings: Pick<ProviderSignInSettings, "callbackUrl">,
  flow: { state: string; codeVerifier: string; nonce: string; reauthenticate?: boolean },
): Promise<URL> {
  return oidc.buildAuthorizationUrl(await reachableConfigurationOf(provider), {
    redirect_uri: providerCallbackUrl(settings, provider.name),
    scope: "openid email profile",
    code_challenge: await oidc.calculatePKCECodeChallenge(flow.codeVerifier),
    code_challenge_method: "S256",
    state: flow.state,
    nonce: flow.nonce,
    ...(flow.reauthenticate ? { prompt: "login", max_age: "0" } : {}),
  });
}

/** Starts a flow at `provider`: the URL to send the browser to, and what the callback will need. */
export async function beginProviderSignIn(
  provider: IdentityProviderSettings,
  settings: Pick<ProviderSignInSettings, "callbackUrl">,
  jwtSecret: Uint8Array,
  options: { reauthenticate?: boolean } = {},
): Promise<ProviderFlow> {
  const flow = {
    state: oidc.randomState(),
    codeVerifier: oidc.randomPKCECodeVerifier(),
    nonce: oidc.randomNonce(),
    reauthenticate: options.reauthenticate,
  };
  const url = await authorizationUrlOf(provider, settings, flow);
  return { ...flow, url, stateHash: await stateHashOf(jwtSecret, flow.state) };
}

/**
 * Exchanges the callback's code (with the flow's PKCE verifier) and checks the ID token; throws openid-client's
 * error for anything wrong: the provider's `error=`, a foreign `iss`, a spent code, a bad signature, a wrong nonce;
 * or `ProviderClaimsError` for claims no account can take (`provider-claims.ts`).
 * The callback's query is read against the provider's public callback URL, which is the `redirect_uri` the code was
 * issued to, whatever URL the gateway handed the function. Where the provider's metadata advertises
 * `authorization_response_iss_parameter_supported` (RFC 9207), a callback without `iss` is refused, and any `iss`
 * must be the provider's (`validateAuthResponse` in `oauth4webapi/build/index.js`).
 */
export async function finishProviderSignIn(
  provider: IdentityProviderSettings,
  settings: Pick<ProviderSignInSettings, "callbackUrl">,
  callbackQuery: URLSearchParams,
  flow: { state: string; codeVerifier: string; nonce: string; reauthenticate?: boolean },
): Promise<ProviderClaims> {
  const configuration = await configurationOf(provider);
  const current = new URL(providerCallbackUrl(settings, provider.name));
  current.search = callbackQuery.toString();
  const tokens = await oidc.authorizationCodeGrant(configuration, current, {
    pkceCodeVerifier: flow.codeVerifier,
    expectedState: flow.state,
    expectedNonce: flow.nonce,
    idTokenExpected: true,
    // A proof needs a sign-in made now: the ID token's auth_time within the clock tolerance (30 s) of the exchange.
    ...(flow.reauthenticate ? { maxAge: 0 } : {}),
  });
  return await claimsOf(configuration, tokens, Date.now());
}
