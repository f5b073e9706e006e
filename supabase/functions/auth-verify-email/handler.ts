import { invalidCredentials, refuseLogin, tooManyAttempts } from "../_shared/auth/login-refusals.ts";
import { requireCaller } from "../_shared/auth/caller.ts";
import { clientAddress } from "../_shared/http/client-address.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { verifyEmailBody } from "../_shared/contract/accounts.ts";
import { withLiveCaller } from "../_shared/db/caller-transactions.ts";
import { withServiceTransaction } from "../_shared/db/transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { BadRequestError, ForbiddenError, TooManyRequestsError, UnauthorizedError } from "../_shared/http/errors.ts";
import { verificationCodeHash } from "../_shared/auth/one-time-codes.ts";
import { verifyPassword, withPasswordAdmission } from "../_shared/auth/passwords.ts";
import { passwordAttempt } from "../_shared/queries/accounts.ts";
import { verifyEmail } from "../_shared/queries/email-proofs.ts";
import { asTooManyRequests, requireAddressLimit } from "../_shared/queries/rate-limits.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { newSessionOf, sessionFor } from "../_shared/auth/session.ts";
import { tooManyVerifications } from "../_shared/auth/verification.ts";

/** One answer for a wrong, used, expired or burned code, so none is revealed. */
const invalidCode = "Invalid or expired code";

/** The 401 of a code that comes without the account's access token or password. */
function credentialsRequired(): UnauthorizedError {
  return new UnauthorizedError(
    "credentials_required",
    "Verify from the signed-in app, or give the account's password with the code",
  );
}

/**
 * `POST /auth/verify-email`: marks the address verified with the code mailed
 * at sign-up, and signs the user in. The code proves the mailbox; the request
 * must also prove the account, with its access token or its password, so
 * whoever registered an address first never keeps an account its owner
 * verified (an owner who never chose that password sets one with a reset code,
 * which ends everything issued before it).
 */
export const handler = defineEndpoint({
  name: "auth-verify-email",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const { bcryptCost, jwtSecret, limits, sessions } = getConfig();
    const { email, code, password } = await readJsonBody(req, verifyEmailBody, limits.bodyTimeoutMs);
    const address = clientAddress(req, info, limits);
    const codeHash = await verificationCodeHash(jwtSecret, email, code);
    const session = newSessionOf(req, address, sessions);
    const addressLimit = requireAddressLimit("verify-address", address, limits);

    let verifying;
    if (req.headers.has("authorization")) {
      // The account's own session: one round trip, behind the check that the session is live.
      const caller = await requireCaller(req);
      verifying = withLiveCaller(
        caller,
        verifyEmail({ email, codeHash, provenUserId: caller.sub, session }),
        addressLimit,
      );
    } else if (password !== undefined) {
      // The account's password, checked as a login checks it: counted against the login limits first.
      const { userAgent } = session;
      const provenPasswordHash = await withPasswordAdmission(async () => {
        const attempt = await withServiceTransaction(
          passwordAttempt({ email, address, userAgent, limits }),
          addressLimit,
        )
          .catch(asTooManyRequests(tooManyVerifications));
        if (attempt.retryAfter > 0) throw new TooManyRequestsError(tooManyAttempts, attempt.retryAfter);
        if (!await verifyPassword(password, attempt.passwordHash, bcryptCost) || !attempt.passwordHash) {
          const wrong = new UnauthorizedError("invalid_credentials", invalidCredentials);
          return refuseLogin(wrong, { email, address, userAgent, details: { via: "verify_email" } });
        }
        return attempt.passwordHash;
      });
      verifying = withServiceTransaction(verifyEmail({ email, codeHash, provenPasswordHash, session }));
    } else {
      throw credentialsRequired();
    }
    const outcome = await verifying.catch(asTooManyRequests(tooManyVerifications));
    switch (outcome.kind) {
      case "unproven":
        throw credentialsRequired();
      case "bad-code":
        throw new BadRequestError(invalidCode, [{ field: "code", message: invalidCode }], { code: "invalid_code" });
      case "suspended":
        throw new ForbiddenError("account_suspended", "Account is suspended");
      case "verified":
        return authSuccess(200, "Email verified", await sessionFor(outcome.account, outcome.session, jwtSecret));
    }
  },
});
