import { requireCaller } from "../_shared/auth/caller.ts";
import { signInCodeHash } from "../_shared/auth/one-time-codes.ts";
import { newSessionOf, sessionFor } from "../_shared/auth/session.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { upgradeWithCodeBody } from "../_shared/contract/accounts.ts";
import { withFullCaller } from "../_shared/db/caller-transactions.ts";
import { clientAddress } from "../_shared/http/client-address.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { TooManyRequestsError } from "../_shared/http/errors.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { upgradeAnonymousWithCode } from "../_shared/queries/anonymous-upgrade-codes.ts";
import { asTooManyRequests, requireAddressLimit } from "../_shared/queries/rate-limits.ts";
import { emailTaken, notAnonymous } from "../auth-anonymous-upgrade/handler.ts";
import { invalidCodeError, tooManyCodeAttempts } from "../auth-otp-verify/handler.ts";

/**
 * `POST /auth/anonymous/upgrade/verify`: the signed-in anonymous account signs
 * up with the code `/auth/anonymous/upgrade/code` mailed, and a name. It keeps
 * its id and so every note; the address is verified by the code, and the
 * account has no password (it may set one with a reset). The anonymous session
 * goes on as the real account; the answer is a new session, as login's. Wrong
 * codes count per address as sign-in codes do (10 an hour, then 429); an
 * address registered since the code was mailed is 409 `email_taken`, and
 * nothing changes.
 */
export const handler = defineEndpoint({
  name: "auth-anonymous-upgrade-verify",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const caller = await requireCaller(req);
    const { jwtSecret, limits, sessions } = getConfig();
    const { name, email, code } = await readJsonBody(req, upgradeWithCodeBody, limits.bodyTimeoutMs);
    const address = clientAddress(req, info, limits);
    const outcome = await withFullCaller(
      caller,
      upgradeAnonymousWithCode({
        userId: caller.sub,
        callerSessionId: caller.session_id,
        email,
        name,
        codeHash: await signInCodeHash(jwtSecret, code),
        session: newSessionOf(req, address, sessions),
      }),
      requireAddressLimit("reset-address", address, limits),
    ).catch(asTooManyRequests(tooManyCodeAttempts));
    switch (outcome.kind) {
      case "throttled":
        throw new TooManyRequestsError(tooManyCodeAttempts, outcome.retryAfter);
      case "bad-code":
        throw invalidCodeError();
      case "email_taken":
        throw emailTaken();
      case "not_anonymous":
        throw notAnonymous();
      case "upgraded":
        return authSuccess(200, "Account upgraded", await sessionFor(outcome.account, outcome.session, jwtSecret));
    }
  },
});
