import { requireCaller } from "../_shared/auth/caller.ts";
import { browserStepUrl } from "../_shared/auth/flow-binding.ts";
import { allowedReturnUrl, configuredProvider, tooManyStarts } from "../_shared/auth/provider-choice.ts";
import { beginProviderSignIn } from "../_shared/auth/provider-sign-in.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { type IdentityLinkStart, reauthenticateWithProviderBody } from "../_shared/contract/identities.ts";
import { withFullCaller } from "../_shared/db/caller-transactions.ts";
import { clientAddress } from "../_shared/http/client-address.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { NotFoundError } from "../_shared/http/errors.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { startOAuthFlow } from "../_shared/queries/oauth-flows.ts";

/**
 * `POST /auth/reauthenticate/provider {provider, redirectTo}`: a proof for an account that signs in with a provider
 * (one without a password, above all): answers the URL to navigate the browser to (`GET
 * /auth/identities/link/authorize`, which binds the flow to the browser, as a link's), and on to the provider, which
 * asks the person to sign in again whatever session it holds (`prompt=login`, `max_age=0`). When an identity of this
 * account signs in there, the callback records the proof on this session (5 minutes, as `POST /auth/reauthenticate`) and returns the browser to
 * `redirectTo` with `reauthenticated=<provider>`. An account with no identity of that provider is a 404.
 */
export const handler = defineEndpoint({
  name: "auth-reauthenticate-provider",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const caller = await requireCaller(req);
    const { jwtSecret, limits, providerSignIn } = getConfig();
    const body = await readJsonBody(req, reauthenticateWithProviderBody, limits.bodyTimeoutMs);
    const provider = configuredProvider(providerSignIn, body.provider, "provider");
    const redirectTo = allowedReturnUrl(providerSignIn, body.redirectTo, "redirectTo");
    const flow = await beginProviderSignIn(provider, providerSignIn, jwtSecret, { reauthenticate: true });
    const started = await withFullCaller(
      caller,
      startOAuthFlow(
        { ...flow, provider: provider.name, redirectTo },
        { address: clientAddress(req, info, limits), limits },
        { userId: caller.sub, sessionId: caller.session_id, passwordHash: undefined, reauthenticate: true },
      ),
    );
    if (started.retryAfter > 0) throw tooManyStarts(started.retryAfter);
    if (!started.linkAllowed) {
      throw new NotFoundError("identity_not_found", `No identity of ${provider.name} is linked to this account`);
    }
    const data: IdentityLinkStart = { url: browserStepUrl(providerSignIn.functionsUrl, flow.state) };
    return authSuccess(200, "Continue at the provider", data);
  },
});
