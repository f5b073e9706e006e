import { getConfig } from "../_shared/config.ts";
import { registerBody } from "../_shared/contract.ts";
import { isUniqueViolation, withServiceTransaction } from "../_shared/db.ts";
import { defineEndpoint } from "../_shared/endpoint.ts";
import { authSuccess } from "../_shared/envelopes.ts";
import { HttpError } from "../_shared/http-error.ts";
import { insertUser } from "../_shared/queries/accounts.ts";
import { readJsonBody } from "../_shared/request.ts";
import { sessionFor } from "../_shared/session.ts";

/** `POST /auth/register`: creates a STANDARD_USER account and signs it in. */
export const handler = defineEndpoint({
  name: "auth-register",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req) => {
    const body = await readJsonBody(req, registerBody);
    const { bcryptCost, jwtSecret } = getConfig();
    // The unique index decides, so two concurrent registers of one email cannot both win.
    const account = await withServiceTransaction(insertUser({ ...body, bcryptCost })).catch((error) => {
      if (isUniqueViolation(error)) {
        throw new HttpError(409, "An account with this email already exists");
      }
      throw error;
    });
    return authSuccess(201, "User registered successfully", await sessionFor(account, jwtSecret));
  },
});
