import { getConfig } from "../_shared/config/mod.ts";
import { signInWithCodeBody } from "../_shared/contract/accounts.ts";
import { withServiceTransaction } from "../_shared/db/transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { BadRequestError, ForbiddenError, TooManyRequestsError } from "../_shared/http/errors.ts";
import { clientAddress } from "../_shared/http/client-address.ts";
import { asTooManyRequests, requireAddressLimit } from "../_shared/queries/rate-limits.ts";
import { signInWithCode } from "../_shared/queries/sign-in-codes.ts";
import { signInCodeHash } from "../_shared/auth/one-time-codes.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { newSessionOf, sessionFor } from "../_shared/auth/session.ts";

/** The 429 message of the code-guessing limits (per client address, and per email). */
export const tooManyCodeAttempts = "Too many code attempts; try again later";

const invalidCode = "Invalid or expired code";

/** The 400 of a wrong, used, superseded or expired code (`invalid_code`), naming the field. */
export function invalidCodeError(): BadRequestError {
  return new BadRequestError(invalidCode, [{ field: "code", message: invalidCode }], { code: "invalid_code" });
}

/**
 * `POST /auth/otp/verify`: signs in with the code `POST /auth/otp` mailed, as
 * a login does (a refresh token, a device token, and `mfaRequired` when the
 * account has a second factor). A wrong, used, superseded or expired code, and
 * any code for an unknown email, is the same 400; wrong codes are bounded per
 * email (10 an hour across every code asked for) and per client address. The
 * code proves the address: the account is marked verified, and one whose
 * address was unproven goes back to its owner as after a reset. With
 * `OTP_SIGN_UP`, a code mailed to an address no account held creates the
 * account (verified by the code, named `name` or else by the address's local
 * part) and signs it in; off, such an address only ever gets the same 400.
 */
export const handler = defineEndpoint({
  name: "auth-otp-verify",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const { jwtSecret, limits, sessions, resetRevokesRecentDays, otpSignUp } = getConfig();
    const { email, code, name } = await readJsonBody(req, signInWithCodeBody, limits.bodyTimeoutMs);
    const address = clientAddress(req, info, limits);
    // One round trip: the address's attempt is counted, then one statement uses up a right code and starts the
    // session, or counts a wrong one against the email; both commit.
    const outcome = await withServiceTransaction(
      signInWithCode({
        email,
        codeHash: await signInCodeHash(jwtSecret, code),
        revokeRecentDays: resetRevokesRecentDays,
        session: newSessionOf(req, address, sessions),
        signUp: otpSignUp,
        name,
      }),
      requireAddressLimit("reset-address", address, limits),
    ).catch(asTooManyRequests(tooManyCodeAttempts));
    switch (outcome.kind) {
      case "throttled":
        throw new TooManyRequestsError(tooManyCodeAttempts, outcome.retryAfter);
      case "bad-code":
        throw invalidCodeError();
      case "suspended":
        throw new ForbiddenError("account_suspended", "Account is suspended");
      case "signed-in":
        return authSuccess(200, "Login successful", await sessionFor(outcome.account, outcome.session, jwtSecret));
      case "registered":
        return authSuccess(200, "Account created", await sessionFor(outcome.account, outcome.session, jwtSecret));
    }
  },
});
