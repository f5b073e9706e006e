import { requireCaller } from "../_shared/caller.ts";
import { clientAddress } from "../_shared/client-address.ts";
import { getConfig } from "../_shared/config.ts";
import { changePasswordBody } from "../_shared/contract.ts";
import { withLiveCaller } from "../_shared/db.ts";
import { defineEndpoint } from "../_shared/endpoint.ts";
import { authSuccess } from "../_shared/envelopes.ts";
import { changePassword } from "../_shared/queries/accounts.ts";
import { checkReenteredPassword, wrongPassword } from "../_shared/reentered-password.ts";
import { hashPassword, withPasswordAdmission } from "../_shared/passwords.ts";
import { readJsonBody } from "../_shared/request.ts";
import { newSessionOf, sessionFor } from "../_shared/session.ts";

/**
 * `POST /auth/change-password`: sets a new password for the signed-in user
 * who knows the current one. Every other session and token of the account
 * ends; the answer is a fresh session, as login's.
 */
export const handler = defineEndpoint({
  name: "auth-change-password",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const caller = await requireCaller(req);
    const { bcryptCost, jwtSecret, limits, sessions } = getConfig();
    const { currentPassword, newPassword } = await readJsonBody(req, changePasswordBody, limits.bodyTimeoutMs);
    const address = clientAddress(req, info, limits);
    const { expectedHash, newHash } = await withPasswordAdmission(async () => ({
      expectedHash: await checkReenteredPassword(caller, currentPassword, {
        address,
        userAgent: req.headers.get("user-agent") ?? undefined,
        via: "change_password",
      }),
      newHash: await hashPassword(newPassword, bcryptCost),
    }));
    const outcome = await withLiveCaller(
      caller,
      changePassword({
        userId: caller.sub,
        expectedHash,
        newHash,
        address,
        session: newSessionOf(req, address, sessions),
      }),
    );
    // The password changed since it was checked (another change, a reset): the one given is no longer it.
    if (outcome.kind === "stale") throw wrongPassword();
    return authSuccess(200, "Password changed", await sessionFor(outcome.account, outcome.session, jwtSecret));
  },
});
