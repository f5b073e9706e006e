import { requireCaller } from "../_shared/auth/caller.ts";
import { clientAddress } from "../_shared/http/client-address.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { recoverBody, type Recovery } from "../_shared/contract/second-factor.ts";
import { withLiveCaller } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { passSecondStep } from "../_shared/queries/second-factors.ts";
import { proofOf, refusedAttempt } from "../_shared/auth/second-factor-proofs.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { newSessionOf, sessionFor } from "../_shared/auth/session.ts";

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
    const { jwtSecret, limits, sessions } = getConfig();
    const body = await readJsonBody(req, recoverBody, limits.bodyTimeoutMs);
    const { factorId, proof } = await proofOf(caller, body, jwtSecret);
    const step = await withLiveCaller(
      caller,
      passSecondStep({
        userId: caller.sub,
        callerSessionId: caller.session_id,
        factorId,
        proof,
        session: newSessionOf(req, clientAddress(req, info, limits), sessions),
      }),
    );
    if (step.kind !== "accepted") throw refusedAttempt(step, "recoveryCode");
    const data: Recovery = {
      ...await sessionFor(step.account, step.session, jwtSecret),
      recoveryCodesLeft: step.recoveryCodesLeft,
    };
    return authSuccess(200, "Recovery code accepted", data);
  },
});
