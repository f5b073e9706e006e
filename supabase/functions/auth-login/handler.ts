import { clientAddress } from "../_shared/client-address.ts";
import { getConfig } from "../_shared/config.ts";
import { loginBody } from "../_shared/contract.ts";
import { withServiceTransaction } from "../_shared/db.ts";
import { defineEndpoint } from "../_shared/endpoint.ts";
import { authSuccess } from "../_shared/envelopes.ts";
import { ForbiddenError, TooManyRequestsError, UnauthorizedError } from "../_shared/http-error.ts";
import { checkCredentials } from "../_shared/queries/accounts.ts";
import { reserveLoginAttempt } from "../_shared/queries/rate-limits.ts";
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
    const { bcryptCost, jwtSecret, limits } = getConfig();
    const { email, password } = await readJsonBody(req, loginBody, limits.bodyTimeoutMs);
    const address = clientAddress(req, info, limits);
    // Counted and committed before the password is checked, so concurrent guesses each see the others.
    const retryAfter = await withServiceTransaction(reserveLoginAttempt({ email, address, limits }));
    if (retryAfter > 0) throw new TooManyRequestsError(tooManyAttempts, retryAfter);
    // A match on an ACTIVE account also clears the failures of this email from this address, in the same statement.
    const match = await withServiceTransaction(checkCredentials({ email, password, bcryptCost, address }));
    if (!match?.passwordMatches) throw new UnauthorizedError(invalidCredentials);
    // Checked only after the password, so a wrong guess cannot learn the account's status.
    if (match.account.user.status === "SUSPENDED") throw new ForbiddenError("Account is suspended");
    return authSuccess(200, "Login successful", await sessionFor(match.account, jwtSecret));
  },
});
