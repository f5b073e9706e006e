import { requireCaller } from "../_shared/auth/caller.ts";
import { clientAddress } from "../_shared/http/client-address.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { verifyFactorBody } from "../_shared/contract/second-factor.ts";
import { withLiveCaller } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { passSecondStep } from "../_shared/queries/second-factors.ts";
import { proofOf, refusedAttempt } from "../_shared/auth/second-factor-proofs.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { newSessionOf, sessionFor } from "../_shared/auth/session.ts";

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
    const { jwtSecret, limits, sessions } = getConfig();
    const body = await readJsonBody(req, verifyFactorBody, limits.bodyTimeoutMs);
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
    if (step.kind !== "accepted") throw refusedAttempt(step);
    return authSuccess(200, "Second factor verified", await sessionFor(step.account, step.session, jwtSecret));
  },
});
