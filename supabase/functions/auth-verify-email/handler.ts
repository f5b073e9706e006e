import { clientAddress } from "../_shared/client-address.ts";
import { getConfig } from "../_shared/config.ts";
import { verifyEmailBody } from "../_shared/contract.ts";
import { withServiceTransaction } from "../_shared/db.ts";
import { defineEndpoint } from "../_shared/endpoint.ts";
import { authSuccess } from "../_shared/envelopes.ts";
import { BadRequestError, ForbiddenError } from "../_shared/http-error.ts";
import { verificationCodeHash } from "../_shared/one-time-codes.ts";
import { verifyEmail } from "../_shared/queries/accounts.ts";
import { asTooManyRequests, requireAddressLimit } from "../_shared/queries/rate-limits.ts";
import { readJsonBody } from "../_shared/request.ts";
import { newSessionOf, sessionFor } from "../_shared/session.ts";

/** The 429 message of the per-address limit of verify-email and resend-verification. */
export const tooManyVerifications = "Too many verification attempts; try again later";

/** One answer for a wrong, used, expired or burned code and for an unknown address, so none is revealed. */
const invalidCode = "Invalid or expired code";

/** `POST /auth/verify-email`: marks the address verified with the code mailed at sign-up, and signs the user in. */
export const handler = defineEndpoint({
  name: "auth-verify-email",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const { jwtSecret, limits, sessions } = getConfig();
    const { email, code } = await readJsonBody(req, verifyEmailBody, limits.bodyTimeoutMs);
    const address = clientAddress(req, info, limits);
    const outcome = await withServiceTransaction(
      verifyEmail({
        email,
        codeHash: await verificationCodeHash(jwtSecret, email, code),
        session: newSessionOf(req, address, sessions),
      }),
      requireAddressLimit("verify-address", address, limits),
    ).catch(asTooManyRequests(tooManyVerifications));
    switch (outcome.kind) {
      case "bad-code":
        throw new BadRequestError(invalidCode, [{ field: "code", message: invalidCode }], { code: "invalid_code" });
      case "suspended":
        throw new ForbiddenError("account_suspended", "Account is suspended");
      case "verified":
        return authSuccess(200, "Email verified", await sessionFor(outcome.account, outcome.session, jwtSecret));
    }
  },
});
