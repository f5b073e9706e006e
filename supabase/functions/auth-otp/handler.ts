import { clientAddress } from "../_shared/http/client-address.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { sendSignInCodeBody } from "../_shared/contract/accounts.ts";
import { withServiceTransaction } from "../_shared/db/transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { dispatchAfterResponse } from "../_shared/mail/dispatch.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { asTooManyRequests, requireAddressLimit } from "../_shared/queries/rate-limits.ts";
import { recordSignInCodeRequest } from "../_shared/queries/sign-in-codes.ts";
import { readJsonBody } from "../_shared/http/request.ts";

/** The same answer whether or not the email has an account, so it reveals neither. */
export const signInCodeSentMessage = "If an account exists for this email, a sign-in code has been sent to it";

/** The 429 message of the per-address limit of code requests. */
export const tooManyCodeRequests = "Too many code requests from this address; try again later";

/**
 * `POST /auth/otp`: queues the request, and the mail drainers mail a new
 * 8-digit code to a known, active email (ending the previous one) within the
 * verification mails' limits. The answer is the same 200 either way, after the
 * same single insert, so neither its text nor its timing tells whether the
 * email has an account.
 */
export const handler = defineEndpoint({
  name: "auth-otp",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const { limits } = getConfig();
    const { email } = await readJsonBody(req, sendSignInCodeBody, limits.bodyTimeoutMs);
    const address = clientAddress(req, info, limits);
    await withServiceTransaction(
      recordSignInCodeRequest(email),
      requireAddressLimit("reset-request-address", address, limits),
    ).catch(asTooManyRequests(tooManyCodeRequests));
    dispatchAfterResponse();
    return authSuccess(200, signInCodeSentMessage, {});
  },
});
