import { getConfig } from "../_shared/config.ts";
import { createPasswordBody } from "../_shared/contract.ts";
import { withServiceTransaction } from "../_shared/db.ts";
import { defineEndpoint } from "../_shared/endpoint.ts";
import { authSuccess } from "../_shared/envelopes.ts";
import { BadRequestError, HttpError } from "../_shared/http-error.ts";
import { consumeResetCode, lockUserByEmail, setPasswordAndVerify } from "../_shared/queries/accounts.ts";
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
    // A wrong code must still commit its used-up attempt, so the outcome is returned, not thrown.
    const outcome = await withServiceTransaction(async (tx) => {
      const user = await lockUserByEmail(tx, email);
      if (!user) return { kind: "unknown-user" } as const;
      const check = await consumeResetCode(tx, user.id, code);
      if (check !== "valid") return { kind: "bad-code" } as const;
      // Checked only after a valid code, as login checks it only after the password: no token for a suspended account.
      if (user.status === "SUSPENDED") return { kind: "suspended" } as const;
      return {
        kind: "updated",
        account: await setPasswordAndVerify(tx, { userId: user.id, password, bcryptCost }),
      } as const;
    });
    if (outcome.kind === "unknown-user") throw new HttpError(404, "User not found");
    if (outcome.kind === "bad-code") throw new BadRequestError("Invalid or expired code");
    if (outcome.kind === "suspended") throw new HttpError(403, "Account is suspended");
    return authSuccess(200, "Password set successfully", await sessionFor(outcome.account, jwtSecret));
  },
});
