import { getConfig } from "../_shared/config.ts";
import { createPasswordBody } from "../_shared/contract.ts";
import { withServiceTransaction } from "../_shared/db.ts";
import { defineEndpoint } from "../_shared/endpoint.ts";
import { authSuccess } from "../_shared/envelopes.ts";
import { BadRequestError, HttpError } from "../_shared/http-error.ts";
import { resetPassword } from "../_shared/queries/accounts.ts";
import { readJsonBody } from "../_shared/request.ts";
import { sessionFor } from "../_shared/session.ts";

/** `POST /auth/create-password`: sets the password with a reset code and signs the user in. */
export const handler = defineEndpoint({
  name: "auth-create-password",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req) => {
    const { email, password, code } = await readJsonBody(req, createPasswordBody);
    const { bcryptCost, jwtSecret } = getConfig();
    // One statement: a wrong code's used-up attempt commits, a valid code is consumed with the new password.
    const outcome = await withServiceTransaction(resetPassword({ email, code, password, bcryptCost }));
    switch (outcome.kind) {
      case "unknown-user":
        throw new HttpError(404, "User not found");
      case "bad-code":
        throw new BadRequestError("Invalid or expired code");
      case "suspended":
        throw new HttpError(403, "Account is suspended");
      case "updated":
        return authSuccess(200, "Password set successfully", await sessionFor(outcome.account, jwtSecret));
    }
  },
});
