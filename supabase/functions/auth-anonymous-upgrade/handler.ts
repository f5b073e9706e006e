import { requireCaller } from "../_shared/auth/caller.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { upgradeAnonymousBody } from "../_shared/contract/accounts.ts";
import { withFullCaller } from "../_shared/db/caller-transactions.ts";
import { isUniqueViolation } from "../_shared/db/errors.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { ConflictError } from "../_shared/http/errors.ts";
import { clientAddress } from "../_shared/http/client-address.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { dispatchAfterResponse } from "../_shared/mail/dispatch.ts";
import { upgradeAnonymous } from "../_shared/queries/anonymous.ts";
import { hashPassword, withPasswordAdmission } from "../_shared/auth/passwords.ts";
import { newSessionOf, sessionFor } from "../_shared/auth/session.ts";
import { newVerificationCode } from "../_shared/auth/verification.ts";

/** The 409 of an address that has an account: the app can sign in there and merge instead. */
export function emailTaken(options?: ErrorOptions): ConflictError {
  return new ConflictError("email_taken", "An account with this email already exists", options);
}

/** The 409 of a caller whose account is not anonymous (any more). */
export function notAnonymous(): ConflictError {
  return new ConflictError("not_anonymous", "This account is not anonymous");
}

/**
 * `POST /auth/anonymous/upgrade`: the signed-in anonymous account signs up
 * with a name, an email and a password, keeping its id and so every note. A
 * code to verify the address is mailed as at sign-up. An email that has an
 * account is refused (409 `email_taken`) with nothing changed: the app can
 * then sign in to that account and merge.
 */
export const handler = defineEndpoint({
  name: "auth-anonymous-upgrade",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const caller = await requireCaller(req);
    const { bcryptCost, jwtSecret, limits, sessions } = getConfig();
    const body = await readJsonBody(req, upgradeAnonymousBody, limits.bodyTimeoutMs);
    const address = clientAddress(req, info, limits);
    const passwordHash = await withPasswordAdmission(() => hashPassword(body.password, bcryptCost));
    const upgraded = await withFullCaller(
      caller,
      upgradeAnonymous({
        userId: caller.sub,
        callerSessionId: caller.session_id,
        name: body.name,
        email: body.email,
        passwordHash,
        session: newSessionOf(req, address, sessions),
        verification: await newVerificationCode(jwtSecret, body.email),
      }),
    ).catch((error) => {
      if (isUniqueViolation(error)) {
        throw emailTaken({ cause: error });
      }
      throw error;
    });
    if (!upgraded) throw notAnonymous();
    dispatchAfterResponse();
    return authSuccess(200, "Account upgraded", await sessionFor(upgraded.account, upgraded.session, jwtSecret));
  },
});
