import { getConfig, providerCallbackUrl } from "../_shared/config/mod.ts";
import { linkAuthorizeQuery } from "../_shared/contract/identities.ts";
import { withServiceTransaction } from "../_shared/db/transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { redirectResponse } from "../_shared/http/envelopes.ts";
import { BadRequestError } from "../_shared/http/errors.ts";
import { readQuery } from "../_shared/http/request.ts";
import { bindingCookie, newBrowserBinding } from "../_shared/auth/flow-binding.ts";
import { authorizationUrlOf, stateHashOf } from "../_shared/auth/provider-sign-in.ts";
import { bindLinkFlow } from "../_shared/queries/oauth-flows.ts";

const unknownFlow = "This link was already opened, took longer than 10 minutes, or was never started: start it again";

/**
 * `GET /auth/identities/link/authorize?flow=`: the browser's step of a link (or of a proof at a linked provider), at
 * the URL that `POST /auth/identities/link` (or `POST /auth/reauthenticate/provider`) answered (that call comes from the app's code, which can set no cookie on this
 * origin). The first browser to come binds the link's flow to itself with a cookie, as a sign-in's start does, and is
 * sent on to the provider; any later one, or a flow unknown or expired, is a 400 with no redirect.
 */
export const handler = defineEndpoint({
  name: "auth-identities-link-authorize",
  envelope: "auth",
  methods: ["GET"],
  queries: { GET: linkAuthorizeQuery },
  browserNavigation: true,
  handle: async (req) => {
    const { jwtSecret, providerSignIn } = getConfig();
    const { flow: state } = readQuery(req, linkAuthorizeQuery);
    const stateHash = await stateHashOf(jwtSecret, state);
    const browser = await newBrowserBinding(jwtSecret);
    const flow = await withServiceTransaction(bindLinkFlow(stateHash, browser.hash));
    // Taken out of OIDC_PROVIDERS since the link started: nothing of it is used.
    const provider = flow && providerSignIn.providers.get(flow.provider);
    if (!flow || !provider) {
      throw new BadRequestError(unknownFlow, [{ field: "flow", message: unknownFlow }], { code: "invalid_state" });
    }
    const response = redirectResponse(await authorizationUrlOf(provider, providerSignIn, { ...flow, state }));
    response.headers.append(
      "Set-Cookie",
      bindingCookie(stateHash, browser, providerCallbackUrl(providerSignIn, provider.name)),
    );
    return response;
  },
});
