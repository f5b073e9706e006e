import { clientAddress } from "../_shared/http/client-address.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { requestPasswordResetBody } from "../_shared/contract/accounts.ts";
import { withServiceTransaction } from "../_shared/db/transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { dispatchAfterResponse } from "../_shared/mail/dispatch.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { asTooManyRequests, requireAddressLimit } from "../_shared/queries/rate-limits.ts";
import { recordResetRequest } from "../_shared/queries/reset-requests.ts";
import { readJsonBody } from "../_shared/http/request.ts";

/** The same answer whether or not the email has an account, so it reveals neither. */
export const resetRequestedMessage = "If an account exists for this email, a reset code has been sent to it";

/** The 429 message of the per-address reset-request limit. */
export const tooManyResetRequests = "Too many reset requests from this address; try again later";

/**
 * `POST /auth/request-password-reset`: queues the request, and the mail
 * drainers mail a new code to a known email (replacing the previous one)
 * unless the account's reset-mail quota is used up. The answer is the same 200
 * either way, after the same single insert, so neither its text nor its timing
 * tells whether the email has an account.
 */
export const handler = defineEndpoint({
  name: "auth-request-password-reset",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const { limits } = getConfig();
    const { email } = await readJsonBody(req, requestPasswordResetBody, limits.bodyTimeoutMs);
    const address = clientAddress(req, info, limits);
    await withServiceTransaction(
      recordResetRequest(email),
      requireAddressLimit("reset-request-address", address, limits),
    ).catch(asTooManyRequests(tooManyResetRequests));
    // Resolves this request (and any other) after the answer is sent.
    dispatchAfterResponse();
    return authSuccess(200, resetRequestedMessage, {});
  },
});
