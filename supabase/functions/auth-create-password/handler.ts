import { getConfig } from "../_shared/config/mod.ts";
import { createPasswordBody } from "../_shared/contract/accounts.ts";
import { withServiceTransaction } from "../_shared/db/transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { BadRequestError, ForbiddenError, NotFoundError, TooManyRequestsError } from "../_shared/http/errors.ts";
import { clientAddress } from "../_shared/http/client-address.ts";
import { asTooManyRequests, requireAddressLimit } from "../_shared/queries/rate-limits.ts";
import { resetPassword } from "../_shared/queries/email-proofs.ts";
import { hashPassword, withPasswordAdmission } from "../_shared/auth/passwords.ts";
import { resetCodeHash } from "../_shared/auth/one-time-codes.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { newSessionOf, sessionFor } from "../_shared/auth/session.ts";

/** The 429 message of the code-guessing limits (per address, and per account). */
export const tooManyCodeAttempts = "Too many code attempts; try again later";

const invalidCode = "Invalid or expired code";

/**
 * `POST /auth/create-password`: sets the password with a reset code and signs the user in. The code proves the
 * address, so the account goes back to its owner: every session ends, and what was added while the address was
 * unproven (a factor, provider identities), or identities linked in the last `RESET_REVOKES_RECENT_DAYS`, go.
 */
export const handler = defineEndpoint({
  name: "auth-create-password",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const { bcryptCost, jwtSecret, limits, sessions, resetRevokesRecentDays } = getConfig();
    const { email, password, code } = await readJsonBody(
      req,
      createPasswordBody,
      limits.bodyTimeoutMs,
    );
    const address = clientAddress(req, info, limits);
    const passwordHash = await withPasswordAdmission(() => hashPassword(password, bcryptCost));
    // One round trip: the address's attempt is counted, then one statement consumes a valid code with the
    // new password, or uses up an attempt of a wrong one (and counts it against the account); both commit.
    const outcome = await withServiceTransaction(
      resetPassword({
        email,
        codeHash: await resetCodeHash(jwtSecret, code),
        passwordHash,
        limits,
        revokeRecentDays: resetRevokesRecentDays,
        session: newSessionOf(req, address, sessions),
      }),
      requireAddressLimit("reset-address", address, limits),
    ).catch(asTooManyRequests(tooManyCodeAttempts));
    switch (outcome.kind) {
      case "unknown-user":
        throw new NotFoundError("user_not_found", "User not found");
      case "throttled":
        throw new TooManyRequestsError(tooManyCodeAttempts, outcome.retryAfter);
      case "bad-code":
        throw new BadRequestError(invalidCode, [{ field: "code", message: invalidCode }], { code: "invalid_code" });
      case "suspended":
        throw new ForbiddenError("account_suspended", "Account is suspended");
      case "updated":
        return authSuccess(
          200,
          "Password set successfully",
          await sessionFor(outcome.account, outcome.session, jwtSecret),
        );
    }
  },
});
