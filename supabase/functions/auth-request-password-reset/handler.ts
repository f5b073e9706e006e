import { getConfig } from "../_shared/config.ts";
import { requestPasswordResetBody } from "../_shared/contract.ts";
import { withServiceTransaction } from "../_shared/db.ts";
import { defineEndpoint } from "../_shared/endpoint.ts";
import { authSuccess } from "../_shared/envelopes.ts";
import { lockUserByEmail, queueMail, replaceResetCode } from "../_shared/queries/accounts.ts";
import { takeResetMailSlot } from "../_shared/queries/reset-mail-quota.ts";
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
    const { email } = await readJsonBody(req, requestPasswordResetBody);
    const { limits } = getConfig();
    await withServiceTransaction(async (tx) => {
      const user = await lockUserByEmail(tx, email);
      if (!user) return;
      // Over quota the old code stays: a code nobody was sent would only lock its owner out.
      if (!(await takeResetMailSlot(tx, { userId: user.id, limits }))) return;
      const code = generateResetCode();
      // Code and mail commit together: no mail for a code that was not stored, and no code without its mail.
      await replaceResetCode(tx, { userId: user.id, code, ...resetCodePolicy });
      await queueMail(tx, resetCodeMail(user.email, code));
    });
    return authSuccess(200, resetRequestedMessage, {});
  },
});
