import { clientAddress } from "../_shared/client-address.ts";
import { getConfig } from "../_shared/config.ts";
import { loginBody } from "../_shared/contract.ts";
import { withDatabase } from "../_shared/db.ts";
import { defineEndpoint } from "../_shared/endpoint.ts";
import { authSuccess } from "../_shared/envelopes.ts";
import { HttpError, TooManyRequestsError, UnauthorizedError } from "../_shared/http-error.ts";
import { checkCredentials } from "../_shared/queries/accounts.ts";
import { clearLoginFailures, reserveLoginAttempt } from "../_shared/queries/login-throttle.ts";
import { readJsonBody } from "../_shared/request.ts";
import { sessionFor } from "../_shared/session.ts";

/** One message for an unknown email and a wrong password, so neither is revealed. */
export const invalidCredentials = "Invalid email or password";

/** The 429 message: it does not say which limit was hit, so it tells nothing about the email. */
export const tooManyAttempts = "Too many login attempts; try again later";

/** `POST /auth/login`: checks the password and answers with the user and a token. */
export const handler = defineEndpoint({
  name: "auth-login",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const { email, password } = await readJsonBody(req, loginBody);
    const { bcryptCost, jwtSecret, limits } = getConfig();
    const address = clientAddress(req, info, limits.trustProxy);
    // Counted before the password is checked, so a locked email stays locked even for the right password.
    const retryAfter = await withDatabase((sql) => reserveLoginAttempt(sql, { email, address, limits }));
    if (retryAfter > 0) throw new TooManyRequestsError(tooManyAttempts, retryAfter);
    const match = await withDatabase((sql) => checkCredentials(sql, { email, password, bcryptCost }));
    if (!match?.passwordMatches) throw new UnauthorizedError(invalidCredentials);
    // Checked only after the password, so a wrong guess cannot learn the account's status.
    if (match.account.user.status === "SUSPENDED") throw new HttpError(403, "Account is suspended");
    await withDatabase((sql) => clearLoginFailures(sql, email));
    return authSuccess(200, "Login successful", await sessionFor(match.account, jwtSecret));
  },
});
