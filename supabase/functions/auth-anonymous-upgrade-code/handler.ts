import { requireCaller } from "../_shared/auth/caller.ts";
import {
  generateSignInCode,
  signInCodeHash,
  signInCodeMail,
  signInCodePolicy,
} from "../_shared/auth/one-time-codes.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { requestUpgradeCodeBody } from "../_shared/contract/accounts.ts";
import { withFullCaller } from "../_shared/db/caller-transactions.ts";
import { clientAddress } from "../_shared/http/client-address.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { TooManyRequestsError } from "../_shared/http/errors.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { dispatchAfterResponse } from "../_shared/mail/dispatch.ts";
import { requestUpgradeCode } from "../_shared/queries/anonymous-upgrade-codes.ts";
import { asTooManyRequests, requireAddressLimit } from "../_shared/queries/rate-limits.ts";
import { tooManyCodeRequests } from "../auth-otp/handler.ts";
import { emailTaken, notAnonymous } from "../auth-anonymous-upgrade/handler.ts";

/**
 * `POST /auth/anonymous/upgrade/code`: the signed-in anonymous account asks
 * for an 8-digit code at the address it will sign up with (no password to make
 * up). An address that has an account is refused (409 `email_taken`), as the
 * password upgrade refuses it, with nothing changed; otherwise the code is
 * mailed, good for 10 minutes, ending the account's last one, within the
 * verification mails' limits per account and per address (429 past them).
 */
export const handler = defineEndpoint({
  name: "auth-anonymous-upgrade-code",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const caller = await requireCaller(req);
    const { jwtSecret, limits } = getConfig();
    const { email } = await readJsonBody(req, requestUpgradeCodeBody, limits.bodyTimeoutMs);
    const address = clientAddress(req, info, limits);
    const code = generateSignInCode();
    const outcome = await withFullCaller(
      caller,
      requestUpgradeCode({
        userId: caller.sub,
        email,
        codeHash: await signInCodeHash(jwtSecret, code),
        ttlMinutes: signInCodePolicy.ttlMinutes,
        mail: signInCodeMail(code),
        limits,
      }),
      requireAddressLimit("reset-request-address", address, limits),
    ).catch(asTooManyRequests(tooManyCodeRequests));
    switch (outcome) {
      case "not_anonymous":
        throw notAnonymous();
      case "email_taken":
        throw emailTaken();
      case "throttled":
        throw new TooManyRequestsError(
          "A code was mailed to this address lately; try again later",
          Math.max(limits.verificationMailMinIntervalSeconds, 1),
        );
      case "sent":
        dispatchAfterResponse();
        return authSuccess(200, "A code has been sent to this email", {});
    }
  },
});
