import { requireCaller } from "../_shared/auth/caller.ts";
import { clientAddress } from "../_shared/http/client-address.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { activateBody, type Activation } from "../_shared/contract/second-factor.ts";
import { withFullCaller } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { NotFoundError } from "../_shared/http/errors.ts";
import { activateFactor, pendingFactor } from "../_shared/queries/second-factors.ts";
import { matchedStepOf, noFactor, refusedAttempt } from "../_shared/auth/second-factor-proofs.ts";
import { newRecoveryCodes, recoveryCodeHash } from "../_shared/auth/recovery-codes.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { newSessionOf, sessionFor } from "../_shared/auth/session.ts";

/**
 * `POST /auth/mfa/activate`: the first code of the pending factor proves the
 * app holds its secret. The factor is enforced from then on: every session of
 * the account ends, the answer is a new session at aal2, and ten recovery
 * codes, shown this once. Two round trips, as a login: the code is checked
 * against the pending factor's secret, which only the database holds.
 */
export const handler = defineEndpoint({
  name: "auth-mfa-activate",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const caller = await requireCaller(req);
    const { jwtSecret, limits, sessions } = getConfig();
    const { factorId, code } = await readJsonBody(req, activateBody, limits.bodyTimeoutMs);
    const sealed = await withFullCaller(caller, pendingFactor(caller.sub, factorId));
    if (!sealed) throw new NotFoundError("factor_not_found", noFactor);
    const recoveryCodes = newRecoveryCodes();
    const step = await withFullCaller(
      caller,
      activateFactor({
        userId: caller.sub,
        factorId,
        matchedStep: await matchedStepOf(sealed, code, getConfig()),
        codeHashes: await Promise.all(
          recoveryCodes.map((one) => recoveryCodeHash(jwtSecret, caller.sub, one)),
        ),
        session: newSessionOf(req, clientAddress(req, info, limits), sessions),
      }),
    );
    if (step.kind !== "accepted") throw refusedAttempt(step);
    const data: Activation = { ...await sessionFor(step.account, step.session, jwtSecret), recoveryCodes };
    return authSuccess(200, "Second factor activated", data);
  },
});
