import { requireCaller } from "../_shared/auth/caller.ts";
import type { CurrentUser } from "../_shared/contract/accounts.ts";
import { withLiveCaller } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { readCaller } from "../_shared/queries/sessions.ts";

/** `GET /auth/user`: the caller's user record, so an app restoring a saved session can show who is signed in. */
export const handler = defineEndpoint({
  name: "auth-user",
  envelope: "auth",
  methods: ["GET"],
  handle: async (req) => {
    const caller = await requireCaller(req);
    const { user } = await withLiveCaller(caller, readCaller(caller));
    const data: CurrentUser = { payload: user };
    return authSuccess(200, "User fetched successfully", data);
  },
});
