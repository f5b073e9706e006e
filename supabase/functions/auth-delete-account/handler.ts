import { requireCaller } from "../_shared/auth/caller.ts";
import { clientAddress } from "../_shared/http/client-address.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { deleteAccountBody, type DeletedAccount } from "../_shared/contract/accounts.ts";
import { withFullCaller } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { deleteAccount } from "../_shared/queries/accounts.ts";
import { checkReenteredPassword, passwordRequired, wrongPassword } from "../_shared/auth/reentered-password.ts";
import { withPasswordAdmission } from "../_shared/auth/passwords.ts";
import { readJsonBody } from "../_shared/http/request.ts";

/**
 * `POST /auth/delete-account`: erases the signed-in user's account, with the
 * password re-entered (or, without a password, a proof given with POST /auth/reauthenticate within the last 5
 * minutes), in one transaction: the account, its notes, their
 * tombstones, counters, sessions, codes, rate-limit rows and queued mails, and
 * every address and user agent the security log held of it (trigger
 * `users_erase_deleted`), which keeps its id alone. The address can then
 * register again as a new, empty account.
 */
export const handler = defineEndpoint({
  name: "auth-delete-account",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const caller = await requireCaller(req);
    const { limits } = getConfig();
    const { password } = await readJsonBody(req, deleteAccountBody, limits.bodyTimeoutMs);
    const address = clientAddress(req, info, limits);
    const client = {
      address,
      userAgent: req.headers.get("user-agent") ?? undefined,
      via: "delete_account" as const,
    };
    // Without the password, Postgres deletes only after a recent proof on this session.
    const expectedHash = password === undefined
      ? undefined
      : await withPasswordAdmission(() => checkReenteredPassword(caller, password, client));
    // False when the password changed since it was checked: the one given is no longer it.
    const deleted = await withFullCaller(caller, deleteAccount({ userId: caller.sub, expectedHash }));
    if (!deleted) throw expectedHash ? wrongPassword() : passwordRequired("password");
    const data: DeletedAccount = { id: caller.sub };
    return authSuccess(200, "Account deleted", data);
  },
});
