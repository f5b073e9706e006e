import { clientAddress } from "../_shared/http/client-address.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { loginBody } from "../_shared/contract/accounts.ts";
import { withServiceTransaction } from "../_shared/db/transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { ForbiddenError, TooManyRequestsError, UnauthorizedError } from "../_shared/http/errors.ts";
import { completeLogin, passwordAttempt } from "../_shared/queries/accounts.ts";
import { invalidCredentials, refuseLogin, tooManyAttempts } from "../_shared/auth/login-refusals.ts";
import { verifyPassword, withPasswordAdmission } from "../_shared/auth/passwords.ts";
import { trustedDevice } from "../_shared/auth/device-tokens.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { newSessionOf, sessionFor } from "../_shared/auth/session.ts";

/** `POST /auth/login`: checks the password and answers with the user and a token. */
export const handler = defineEndpoint({
  name: "auth-login",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const { bcryptCost, jwtSecret, limits, sessions } = getConfig();
    const { email, password, deviceToken } = await readJsonBody(
      req,
      loginBody,
      limits.bodyTimeoutMs,
    );
    const address = clientAddress(req, info, limits);
    // A device its owner signed in from before gets through the account's cap of failures (up to its own cap);
    // a forged or expired device token counts as none, and the database voids one of an older generation.
    const device = await trustedDevice(deviceToken, jwtSecret);
    const newSession = newSessionOf(req, address, sessions);
    const { userAgent } = newSession;
    const failure = { email, address, userAgent, details: {} };
    // Admitted only while few enough password steps are under way; past that a flood is turned away at once.
    return withPasswordAdmission(async () => {
      // Counted and committed before the password is checked, so concurrent guesses each see the others; the
      // same round trip reads the account's hash, which is checked here, in the function, not in Postgres.
      const attempt = await withServiceTransaction(
        passwordAttempt({ email, address, userAgent, limits, device }),
      );
      if (attempt.retryAfter > 0) {
        throw new TooManyRequestsError(tooManyAttempts, attempt.retryAfter);
      }
      // An unknown email is checked against a stand-in hash, so it takes as long as a wrong password.
      if (
        !await verifyPassword(password, attempt.passwordHash, bcryptCost) ||
        !attempt.account || !attempt.passwordHash
      ) {
        return refuseLogin(new UnauthorizedError("invalid_credentials", invalidCredentials), failure);
      }
      // Checked only after the password, so a wrong guess cannot learn the account's status.
      if (attempt.account.user.status === "SUSPENDED") {
        return refuseLogin(new ForbiddenError("account_suspended", "Account is suspended"), {
          ...failure,
          details: { reason: "account_suspended" },
        });
      }
      const match = await withServiceTransaction(completeLogin({
        userId: attempt.account.user.id,
        passwordHash: attempt.passwordHash,
        address,
        device,
        session: newSession,
      }));
      // The password changed, or the account was suspended, since the hash was read: as for a wrong password.
      if (!match) return refuseLogin(new UnauthorizedError("invalid_credentials", invalidCredentials), failure);
      return authSuccess(200, "Login successful", await sessionFor(match.account, match.session, jwtSecret));
    });
  },
});
