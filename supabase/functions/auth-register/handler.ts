import { getConfig } from "../_shared/config/mod.ts";
import { registerBody } from "../_shared/contract/accounts.ts";
import { isUniqueViolation } from "../_shared/db/errors.ts";
import { withServiceTransaction } from "../_shared/db/transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { ConflictError } from "../_shared/http/errors.ts";
import { insertUser } from "../_shared/queries/accounts.ts";
import { hashPassword, withPasswordAdmission } from "../_shared/auth/passwords.ts";
import { asTooManyRequests, requireAddressLimit } from "../_shared/queries/rate-limits.ts";
import { clientAddress } from "../_shared/http/client-address.ts";
import { dispatchAfterResponse } from "../_shared/mail/dispatch.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { newSessionOf, sessionFor } from "../_shared/auth/session.ts";
import { newVerificationCode } from "../_shared/auth/verification.ts";

/** The 429 message of the per-address sign-up limit. */
export const tooManySignUps = "Too many sign-ups from this address; try again later";

/** `POST /auth/register`: creates a STANDARD_USER account, signs it in, and mails a code to verify the address. */
export const handler = defineEndpoint({
  name: "auth-register",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const { bcryptCost, jwtSecret, limits, sessions } = getConfig();
    const body = await readJsonBody(req, registerBody, limits.bodyTimeoutMs);
    const address = clientAddress(req, info, limits);
    const passwordHash = await withPasswordAdmission(() => hashPassword(body.password, bcryptCost));
    // The unique index decides, so two concurrent registers of one email cannot both win. The sign-up
    // limit is counted in the same transaction and round trip, and a refused sign-up counts nothing.
    const { account, session } = await withServiceTransaction(
      insertUser({
        name: body.name,
        email: body.email,
        passwordHash,
        session: newSessionOf(req, address, sessions),
        verification: await newVerificationCode(jwtSecret, body.email),
      }),
      requireAddressLimit("signup-address", address, limits),
    ).catch((error) => {
      if (isUniqueViolation(error)) {
        throw new ConflictError("email_taken", "An account with this email already exists", { cause: error });
      }
      return asTooManyRequests(tooManySignUps)(error);
    });
    // The verification mail was queued with the account; it goes out after the answer.
    dispatchAfterResponse();
    return authSuccess(201, "User registered successfully", await sessionFor(account, session, jwtSecret));
  },
});
