import { getConfig } from "../_shared/config.ts";
import { requestPasswordResetBody } from "../_shared/contract.ts";
import { withServiceTransaction } from "../_shared/db.ts";
import { defineEndpoint } from "../_shared/endpoint.ts";
import { dispatchAfterResponse } from "../_shared/mail/dispatch.ts";
import { authSuccess } from "../_shared/envelopes.ts";
import { requestPasswordReset } from "../_shared/queries/accounts.ts";
import { readJsonBody } from "../_shared/request.ts";
import { generateResetCode, resetCodeMail, resetCodePolicy } from "../_shared/reset-codes.ts";

/** The same answer whether or not the email has an account, so it reveals neither. */
export const resetRequestedMessage = "If an account exists for this email, a reset code has been sent to it";

/**
 * `POST /auth/request-password-reset`: mails a new code to a known email,
 * replacing the previous one, unless the account's reset-mail quota is used up;
 * the answer is the same 200 either way.
 */
export const handler = defineEndpoint({
  name: "auth-request-password-reset",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req) => {
    const { limits } = getConfig();
    const { email } = await readJsonBody(req, requestPasswordResetBody, limits.bodyTimeoutMs);
    const code = generateResetCode();
    // One statement, for a known email or not: the code is stored and mailed only for an account
    // whose reset-mail quota allows it.
    await withServiceTransaction(requestPasswordReset({
      email,
      code,
      ...resetCodePolicy,
      minIntervalSeconds: limits.resetMailMinIntervalSeconds,
      mailsPerHour: limits.resetMailsPerHour,
      mail: resetCodeMail(code),
    }));
    // Called for known and unknown emails alike, and it runs after the answer is sent.
    dispatchAfterResponse();
    return authSuccess(200, resetRequestedMessage, {});
  },
});
