import { requireCaller } from "../_shared/auth/caller.ts";
import { clientAddress, userAgentOf } from "../_shared/http/client-address.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { unenrollBody, type Unenrolled } from "../_shared/contract/second-factor.ts";
import { withFullCaller } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { NotFoundError } from "../_shared/http/errors.ts";
import { unenrollFactor } from "../_shared/queries/second-factors.ts";
import { noFactor, proofOf, refusedAttempt } from "../_shared/auth/second-factor-proofs.ts";
import { readJsonBody } from "../_shared/http/request.ts";

/**
 * `POST /auth/mfa/unenroll`: removes the account's factor, from a session
 * that made the second step, with a current code (or a recovery code): a
 * stolen token alone cannot, whatever its level. Its recovery codes go too,
 * every other session ends, and the user is mailed.
 */
export const handler = defineEndpoint({
  name: "auth-mfa-unenroll",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const caller = await requireCaller(req);
    const { limits } = getConfig();
    const body = await readJsonBody(req, unenrollBody, limits.bodyTimeoutMs);
    const { factorId, proof } = await proofOf(caller, body, getConfig());
    if (factorId !== body.factorId.toLowerCase()) {
      throw new NotFoundError("factor_not_found", noFactor);
    }
    const attempt = await withFullCaller(
      caller,
      unenrollFactor({
        userId: caller.sub,
        callerSessionId: caller.session_id,
        factorId,
        proof,
        userAgent: userAgentOf(req),
        address: clientAddress(req, info, limits),
      }),
    );
    if (attempt.kind !== "accepted") throw refusedAttempt(attempt, body.code === undefined ? "recoveryCode" : "code");
    const data: Unenrolled = { factorId };
    return authSuccess(200, "Second factor removed", data);
  },
});
