import { requireCaller } from "../_shared/auth/caller.ts";
import { clientAddress } from "../_shared/http/client-address.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { changePasswordBody } from "../_shared/contract/accounts.ts";
import { withFullCaller } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { changePassword } from "../_shared/queries/accounts.ts";
import { checkReenteredPassword, passwordRequired, wrongPassword } from "../_shared/auth/reentered-password.ts";
import { hashPassword, withPasswordAdmission } from "../_shared/auth/passwords.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { newSessionOf, sessionFor } from "../_shared/auth/session.ts";

/**
 * `POST /auth/change-password`: sets a new password for the signed-in user
 * who knows the current one, or (an account without a password) whose session
 * proved its owner within the last 5 minutes (`POST /auth/reauthenticate`).
 * Every other session and token of the account
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
    // Without the current password, Postgres lets the change through only after a recent proof on this session.
    const { expectedHash, newHash } = await withPasswordAdmission(async () => ({
      expectedHash: currentPassword === undefined ? undefined : await checkReenteredPassword(caller, currentPassword, {
        address,
        userAgent: req.headers.get("user-agent") ?? undefined,
        via: "change_password",
      }),
      newHash: await hashPassword(newPassword, bcryptCost),
    }));
    const outcome = await withFullCaller(
      caller,
      changePassword({
        userId: caller.sub,
        callerSessionId: caller.session_id,
        expectedHash,
        newHash,
        address,
        session: newSessionOf(req, address, sessions),
      }),
    );
    // The password changed since it was checked (another change, a reset): the one given is no longer it.
    if (outcome.kind === "stale") throw expectedHash ? wrongPassword() : passwordRequired("currentPassword");
    return authSuccess(200, "Password changed", await sessionFor(outcome.account, outcome.session, jwtSecret));
  },
});
