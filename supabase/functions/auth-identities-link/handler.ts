import { requireCaller } from "../_shared/auth/caller.ts";
import { browserStepUrl } from "../_shared/auth/flow-binding.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { type IdentityLinkStart, linkIdentityBody } from "../_shared/contract/identities.ts";
import { withFullCaller } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { clientAddress, userAgentOf } from "../_shared/http/client-address.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { checkReenteredPassword, passwordRequired } from "../_shared/auth/reentered-password.ts";
import { withPasswordAdmission } from "../_shared/auth/passwords.ts";
import { allowedReturnUrl, configuredProvider, tooManyStarts } from "../_shared/auth/provider-choice.ts";
import { beginProviderSignIn } from "../_shared/auth/provider-sign-in.ts";
import { startOAuthFlow } from "../_shared/queries/oauth-flows.ts";

/**
 * `POST /auth/identities/link {provider, redirectTo, password?}`: starts linking a provider identity to the
 * caller's account, with the password re-entered or from a session that proved its owner within the last 5 minutes
 * (`POST /auth/reauthenticate`: a session's age is no proof); answers
 * the URL to navigate the browser to (`GET /auth/identities/link/authorize`, which binds the flow to the browser and
 * goes on to the provider). Its callback hands the app a link code for this session.
 */
export const handler = defineEndpoint({
  name: "auth-identities-link",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const caller = await requireCaller(req);
    const { jwtSecret, limits, providerSignIn } = getConfig();
    const body = await readJsonBody(req, linkIdentityBody, limits.bodyTimeoutMs);
    const provider = configuredProvider(providerSignIn, body.provider, "provider");
    const redirectTo = allowedReturnUrl(providerSignIn, body.redirectTo, "redirectTo");
    const address = clientAddress(req, info, limits);
    const { password } = body;
    const passwordHash = password === undefined
      ? undefined
      : await withPasswordAdmission(() =>
        checkReenteredPassword(caller, password, { address, userAgent: userAgentOf(req), via: "identity_link" })
      );
    const flow = await beginProviderSignIn(provider, providerSignIn, jwtSecret);
    const started = await withFullCaller(
      caller,
      startOAuthFlow({ ...flow, provider: provider.name, redirectTo }, { address, limits }, {
        userId: caller.sub,
        sessionId: caller.session_id,
        passwordHash,
      }),
    );
    if (started.retryAfter > 0) {
      throw tooManyStarts(started.retryAfter);
    }
    if (!started.linkAllowed) {
      throw passwordRequired("password");
    }
    const data: IdentityLinkStart = { url: browserStepUrl(providerSignIn.functionsUrl, flow.state) };
    return authSuccess(200, "Continue at the provider", data);
  },
});
