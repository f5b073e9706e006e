import { clientAddress } from "../_shared/http/client-address.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { resendVerificationBody, type VerificationRequested } from "../_shared/contract/accounts.ts";
import { withServiceTransaction } from "../_shared/db/transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { dispatchAfterResponse } from "../_shared/mail/dispatch.ts";
import { resendVerification } from "../_shared/queries/email-proofs.ts";
import { asTooManyRequests, requireAddressLimit } from "../_shared/queries/rate-limits.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { newVerificationCode, tooManyVerifications } from "../_shared/auth/verification.ts";

/** The same answer for every address, verified, unverified or unknown, so it reveals none. */
export const verificationRequestedMessage =
  "If this address has an account waiting for verification, a new code has been sent";

/**
 * `POST /auth/resend-verification`: mails a new verification code to an
 * unverified account, at most once a minute and 5 times a day; the answer is
 * the same 200 for every address.
 */
export const handler = defineEndpoint({
  name: "auth-resend-verification",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const { jwtSecret, limits } = getConfig();
    const { email } = await readJsonBody(req, resendVerificationBody, limits.bodyTimeoutMs);
    await withServiceTransaction(
      resendVerification({ email, verification: await newVerificationCode(jwtSecret, email), limits }),
      requireAddressLimit("verify-address", clientAddress(req, info, limits), limits),
    ).catch(asTooManyRequests(tooManyVerifications));
    // Called for every address alike, and it runs after the answer is sent.
    dispatchAfterResponse();
    const data: VerificationRequested = {};
    return authSuccess(200, verificationRequestedMessage, data);
  },
});
