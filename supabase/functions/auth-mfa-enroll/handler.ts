import { requireSignedUpCaller } from "../_shared/auth/caller.ts";
import { clientAddress, userAgentOf } from "../_shared/http/client-address.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { enrollBody, type Enrollment } from "../_shared/contract/second-factor.ts";
import { withFullCaller } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { ConflictError } from "../_shared/http/errors.ts";
import { enrollFactor } from "../_shared/queries/second-factors.ts";
import { checkReenteredPassword } from "../_shared/auth/reentered-password.ts";
import { withPasswordAdmission } from "../_shared/auth/passwords.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { sealSecret } from "../_shared/auth/sealed-secrets.ts";
import { newTotpSecret, otpauthUrl } from "../_shared/auth/totp.ts";

/**
 * `POST /auth/mfa/enroll`: starts a TOTP factor for the signed-in user, with
 * the password re-entered. The factor is pending until its first code
 * activates it (`POST /auth/mfa/activate`); a new enrolment replaces a
 * pending one. The secret is answered this once and stored only sealed.
 */
export const handler = defineEndpoint({
  name: "auth-mfa-enroll",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const caller = await requireSignedUpCaller(req);
    const { limits } = getConfig();
    const { password } = await readJsonBody(
      req,
      enrollBody,
      limits.bodyTimeoutMs,
    );
    const client = {
      address: clientAddress(req, info, limits),
      userAgent: userAgentOf(req),
      via: "second_factor_enroll" as const,
    };
    await withPasswordAdmission(() => checkReenteredPassword(caller, password, client));
    const secret = newTotpSecret();
    const factorId = await withFullCaller(
      caller,
      enrollFactor(caller.sub, await sealSecret(getConfig(), secret)),
    );
    if (!factorId) {
      throw new ConflictError("factor_exists", "The account has a second factor already: remove it first");
    }
    const data: Enrollment = { factorId, otpauthUrl: otpauthUrl(secret, caller.email), secret };
    return authSuccess(201, "Second factor enrolment started", data);
  },
});
