import { getConfig } from "../_shared/config.ts";
import { loginBody } from "../_shared/contract.ts";
import { withDatabase } from "../_shared/db.ts";
import { defineEndpoint } from "../_shared/endpoint.ts";
import { authSuccess } from "../_shared/envelopes.ts";
import { HttpError, UnauthorizedError } from "../_shared/http-error.ts";
import { checkCredentials } from "../_shared/queries/accounts.ts";
import { readJsonBody } from "../_shared/request.ts";
import { sessionFor } from "../_shared/session.ts";

/** One message for an unknown email and a wrong password, so neither is revealed. */
export const invalidCredentials = "Invalid email or password";

/** `POST /auth/login`: checks the password and answers with the user and a token. */
export const handler = defineEndpoint({
  name: "auth-login",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req) => {
    const { email, password } = await readJsonBody(req, loginBody);
    const { bcryptCost, jwtSecret } = getConfig();
    const match = await withDatabase((sql) => checkCredentials(sql, { email, password, bcryptCost }));
    if (!match?.passwordMatches) throw new UnauthorizedError(invalidCredentials);
    // Checked only after the password, so a wrong guess cannot learn the account's status.
    if (match.user.status === "SUSPENDED") throw new HttpError(403, "Account is suspended");
    return authSuccess(200, "Login successful", await sessionFor(match.user, jwtSecret));
  },
});
