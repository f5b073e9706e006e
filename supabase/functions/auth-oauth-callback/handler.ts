import { callbackProviderOf, getConfig, providerCallbackUrl } from "../_shared/config/mod.ts";
import { oauthCallbackQuery, type ProviderSignInError } from "../_shared/contract/identities.ts";
import { withServiceTransaction } from "../_shared/db/transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { redirectResponse } from "../_shared/http/envelopes.ts";
import { BadRequestError } from "../_shared/http/errors.ts";
import { clientAddress, userAgentOf } from "../_shared/http/client-address.ts";
import { readQuery } from "../_shared/http/request.ts";
import { describeError } from "../_shared/http/log.ts";
import {
  finishProviderSignIn,
  newSignInCode,
  signInCodeHashOf,
  stateHashOf,
} from "../_shared/auth/provider-sign-in.ts";
import type { ProviderClaims } from "../_shared/auth/provider-claims.ts";
import { presentedBinding, spentBinding } from "../_shared/auth/flow-binding.ts";
import {
  completeOAuthFlow,
  completeProviderReauthentication,
  consumeOAuthFlow,
  type FlowOutcome,
  type ReauthenticationOutcome,
} from "../_shared/queries/oauth-flows.ts";

/** How long the one-time code the app gets in its URL can be exchanged. */
const signInCodeSeconds = 60;

const unknownState =
  "This sign-in was already completed, never started here, or started in another browser: start it again from the app";

/** What the app's URL says when nothing was signed in or linked; the app shows its own words, these are a hint. */
const errorDescriptions: Record<ProviderSignInError, string> = {
  access_denied: "The sign-in was cancelled at the provider",
  identity_not_linked: "An account with this email address exists: sign in to it, then link the provider in settings",
  identity_already_linked: "This provider identity is linked to another account",
  email_required: "The provider did not give an email address",
  account_suspended: "Account is suspended",
  link_expired: "The session that asked for the link has ended: sign in and link again",
  flow_expired: "The sign-in took longer than 10 minutes: start it again",
  provider_error: "The provider's answer could not be used: start the sign-in again",
  server_error: "The sign-in could not be completed: start it again",
};

/** The parameters of an outcome in the app's URL: those already there are replaced. */
const outcomeParameters = ["code", "link_code", "linked", "reauthenticated", "error", "error_description"];

/**
 * The app's URL with the outcome as its query's last word: a one-time code, a link's code, a proof recorded, or an
 * error; the spent flow's cookie is removed.
 */
function backToApp(
  redirectTo: string,
  outcome:
    | { code: string }
    | { link_code: string }
    | { linked: string }
    | { reauthenticated: string }
    | ProviderSignInError,
  spentCookie: string,
): Response {
  const url = new URL(redirectTo);
  for (const name of outcomeParameters) url.searchParams.delete(name);
  if (typeof outcome === "string") {
    url.searchParams.set("error", outcome);
    url.searchParams.set("error_description", errorDescriptions[outcome]);
  } else {
    for (const [name, value] of Object.entries(outcome)) url.searchParams.set(name, value);
  }
  const response = redirectResponse(url);
  response.headers.append("Set-Cookie", spentCookie);
  return response;
}

/**
 * `GET /auth/oauth/callback/<provider>`: where the provider sends the browser back, a redirect URI per provider. The
 * flow's state is consumed first, and goes on only at its own provider's redirect URI (mix-up: no other provider's
 * code reaches its token endpoint) and in the browser it is bound to (the cookie its start set): a replayed, forged,
 * misdirected or other browser's callback is a 400, with no redirect. Then the code is exchanged and the ID token
 * checked,
 * then the identity signs in or makes its account, and the browser goes back to the app with a one-time `code`; or,
 * for a link, with a `link_code` that only the session that asked can complete (so a link URL opened in someone
 * else's browser links nothing); or, for a proof at a linked provider, with `reauthenticated=<provider>` once the
 * session that asked has it recorded; or with `error=`. No token travels in a URL.
 */
export const handler = defineEndpoint({
  name: "auth-oauth-callback",
  envelope: "auth",
  methods: ["GET"],
  queries: { GET: oauthCallbackQuery },
  browserNavigation: true,
  handle: async (req, info) => {
    const { jwtSecret, limits, providerSignIn } = getConfig();
    const { state, error } = readQuery(req, oauthCallbackQuery);
    const stateHash = state ? await stateHashOf(jwtSecret, state) : undefined;
    const flow = stateHash
      ? await withServiceTransaction(consumeOAuthFlow({
        stateHash,
        browserHash: await presentedBinding(req, jwtSecret, stateHash),
        callbackProvider: callbackProviderOf(req.url),
      }))
      : undefined;
    if (!state || !stateHash || !flow) {
      throw new BadRequestError(unknownState, [{ field: "state", message: unknownState }], { code: "invalid_state" });
    }
    const spent = spentBinding(stateHash, providerCallbackUrl(providerSignIn, flow.provider));
    if (flow.expired) return backToApp(flow.redirectTo, "flow_expired", spent);
    if (error) {
      return backToApp(flow.redirectTo, error === "access_denied" ? "access_denied" : "provider_error", spent);
    }
    // Taken out of OIDC_PROVIDERS since the flow started: nothing of it is used.
    const provider = providerSignIn.providers.get(flow.provider);
    if (!provider) return backToApp(flow.redirectTo, "provider_error", spent);
    let claims: ProviderClaims;
    try {
      claims = await finishProviderSignIn(provider, providerSignIn, new URL(req.url).searchParams, {
        ...flow,
        state,
      });
    } catch (refusal) {
      // The provider's or openid-client's words stay in the log; the app gets the code.
      console.warn(JSON.stringify({
        level: "warn",
        function: "auth-oauth-callback",
        provider: flow.provider,
        refusal: describeError(refusal),
      }));
      return backToApp(flow.redirectTo, "provider_error", spent);
    }
    if (flow.reauthenticate && flow.link) {
      const proved: ReauthenticationOutcome | "server_error" = await withServiceTransaction(
        completeProviderReauthentication({
          link: flow.link,
          claims,
          address: clientAddress(req, info, limits),
          userAgent: userAgentOf(req),
        }),
      ).catch((failure) => {
        console.error(
          JSON.stringify({ level: "error", function: "auth-oauth-callback", error: describeError(failure) }),
        );
        return "server_error" as const;
      });
      return backToApp(
        flow.redirectTo,
        proved === "reauthenticated" ? { reauthenticated: provider.name } : proved,
        spent,
      );
    }
    const code = newSignInCode();
    // The flow is spent: whatever goes wrong now, the browser goes back to the app, which can start again.
    const outcome: FlowOutcome | "server_error" = await withServiceTransaction(completeOAuthFlow({
      provider: provider.name,
      claims,
      link: flow.link,
      appCodeChallenge: flow.appCodeChallenge,
      codeHash: await signInCodeHashOf(jwtSecret, code),
      codeSeconds: signInCodeSeconds,
      address: clientAddress(req, info, limits),
      userAgent: userAgentOf(req),
    })).catch((failure) => {
      console.error(JSON.stringify({ level: "error", function: "auth-oauth-callback", error: describeError(failure) }));
      return "server_error" as const;
    });
    if (outcome === "signed_in" || outcome === "registered") return backToApp(flow.redirectTo, { code }, spent);
    if (outcome === "link_pending") return backToApp(flow.redirectTo, { link_code: code }, spent);
    // The identity was this account's already: nothing is left to complete.
    if (outcome === "linked") return backToApp(flow.redirectTo, { linked: provider.name }, spent);
    return backToApp(flow.redirectTo, outcome, spent);
  },
});
