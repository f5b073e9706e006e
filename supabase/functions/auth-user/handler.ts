import { requireCaller } from "../_shared/caller.ts";
import type { CurrentUser } from "../_shared/contract.ts";
import { withLiveCaller } from "../_shared/db.ts";
import { defineEndpoint } from "../_shared/endpoint.ts";
import { authSuccess } from "../_shared/envelopes.ts";
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
