import { requireCaller } from "../_shared/auth/caller.ts";
import { clientAddress, userAgentOf } from "../_shared/http/client-address.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { type RecoveryCodes, recoveryCodesBody } from "../_shared/contract/second-factor.ts";
import { withFullCaller } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { replaceRecoveryCodes } from "../_shared/queries/second-factors.ts";
import { proofOf, refusedAttempt } from "../_shared/auth/second-factor-proofs.ts";
import { newRecoveryCodes, recoveryCodeHash } from "../_shared/auth/recovery-codes.ts";
import { readJsonBody } from "../_shared/http/request.ts";

/**
 * `POST /auth/mfa/recovery-codes`: ten new recovery codes, shown this once;
 * the old ones stop working. From a session that made the second step, with a
 * current code (or a recovery code); every other session ends, and the user
 * is mailed.
 */
export const handler = defineEndpoint({
  name: "auth-mfa-recovery-codes",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const caller = await requireCaller(req);
    const { jwtSecret, limits } = getConfig();
    const body = await readJsonBody(
      req,
      recoveryCodesBody,
      limits.bodyTimeoutMs,
    );
    const { proof } = await proofOf(caller, body, getConfig());
    const codes = newRecoveryCodes();
    const attempt = await withFullCaller(
      caller,
      replaceRecoveryCodes({
        userId: caller.sub,
        callerSessionId: caller.session_id,
        proof,
        codeHashes: await Promise.all(codes.map((code) => recoveryCodeHash(jwtSecret, caller.sub, code))),
        userAgent: userAgentOf(req),
        address: clientAddress(req, info, limits),
      }),
    );
    if (attempt.kind !== "accepted") throw refusedAttempt(attempt, body.code === undefined ? "recoveryCode" : "code");
    const data: RecoveryCodes = { recoveryCodes: codes };
    return authSuccess(200, "Recovery codes replaced", data);
  },
});
