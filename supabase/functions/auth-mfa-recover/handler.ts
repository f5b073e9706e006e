import { requireCaller } from "../_shared/auth/caller.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { recoverBody, type Recovery } from "../_shared/contract/second-factor.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { passSecondStepOf } from "../_shared/auth/second-step.ts";

/**
 * `POST /auth/mfa/recover`: the second step with one recovery code instead of
 * the authenticator's code. The code is used up; the answer says how many
 * remain, and the user is mailed.
 */
export const handler = defineEndpoint({
  name: "auth-mfa-recover",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const caller = await requireCaller(req);
    const body = await readJsonBody(req, recoverBody, getConfig().limits.bodyTimeoutMs);
    const { session, recoveryCodesLeft } = await passSecondStepOf(req, info, caller, body);
    const data: Recovery = { ...session, recoveryCodesLeft };
    return authSuccess(200, "Recovery code accepted", data);
  },
});
