import { getConfig, providerCallbackUrl } from "../_shared/config/mod.ts";
import { oauthAuthorizeQuery } from "../_shared/contract/identities.ts";
import { withServiceTransaction } from "../_shared/db/transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { redirectResponse } from "../_shared/http/envelopes.ts";
import { clientAddress } from "../_shared/http/client-address.ts";
import { readQuery } from "../_shared/http/request.ts";
import { bindingCookie, newBrowserBinding } from "../_shared/auth/flow-binding.ts";
import { allowedReturnUrl, configuredProvider, tooManyStarts } from "../_shared/auth/provider-choice.ts";
import { beginProviderSignIn } from "../_shared/auth/provider-sign-in.ts";
import { startOAuthFlow } from "../_shared/queries/oauth-flows.ts";

/**
 * `GET /auth/oauth/authorize?provider=&redirect_to=&code_challenge=&code_challenge_method=S256`: a browser
 * navigation (no `apikey`) that starts a provider sign-in. The flow (PKCE verifier, nonce, where to return, the app's
 * challenge, and the HMAC of a cookie set on this browser) is stored for 10 minutes, counted in the address's counter
 * of starts (`oauth-address`, with the login's numbers), and the browser is sent to the provider. An unknown
 * provider, a return URL not allowed or a missing challenge is a 400, with no redirect.
 */
export const handler = defineEndpoint({
  name: "auth-oauth-authorize",
  envelope: "auth",
  methods: ["GET"],
  queries: { GET: oauthAuthorizeQuery },
  browserNavigation: true,
  handle: async (req, info) => {
    const { jwtSecret, limits, providerSignIn } = getConfig();
    const query = readQuery(req, oauthAuthorizeQuery);
    const provider = configuredProvider(providerSignIn, query.provider, "provider");
    const redirectTo = allowedReturnUrl(providerSignIn, query.redirect_to, "redirect_to");
    const flow = await beginProviderSignIn(provider, providerSignIn, jwtSecret);
    const browser = await newBrowserBinding(jwtSecret);
    const started = await withServiceTransaction(
      startOAuthFlow({
        ...flow,
        provider: provider.name,
        redirectTo,
        appCodeChallenge: query.code_challenge,
        browserHash: browser.hash,
      }, { address: clientAddress(req, info, limits), limits }),
    );
    if (started.retryAfter > 0) {
      throw tooManyStarts(started.retryAfter);
    }
    const response = redirectResponse(flow.url);
    response.headers.append(
      "Set-Cookie",
      bindingCookie(flow.stateHash, browser, providerCallbackUrl(providerSignIn, provider.name)),
    );
    return response;
  },
});
