import { requireCaller } from "../_shared/auth/caller.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { verifyFactorBody } from "../_shared/contract/second-factor.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { passSecondStepOf } from "../_shared/auth/second-step.ts";

/**
 * `POST /auth/mfa/verify`: the second step of a sign-in. A code of the
 * account's authenticator, of now ±30 s and later than any accepted before,
 * ends the caller's aal1 session and answers an aal2 one in its place. One
 * round trip: the token carries the factor's sealed secret, and Postgres
 * checks and records the code's time step under the factor's lock.
 */
export const handler = defineEndpoint({
  name: "auth-mfa-verify",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const caller = await requireCaller(req);
    const body = await readJsonBody(req, verifyFactorBody, getConfig().limits.bodyTimeoutMs);
    const { session } = await passSecondStepOf(req, info, caller, body);
    return authSuccess(200, "Second factor verified", session);
  },
});
