import { requireCaller } from "../_shared/auth/caller.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { type LoggedOut, logoutBody } from "../_shared/contract/accounts.ts";
import { withFullCaller, withLiveCaller } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { endSessions } from "../_shared/queries/sessions.ts";
import { readOptionalJsonBody } from "../_shared/http/request.ts";

/**
 * `POST /auth/logout`: ends the caller's session (`local`, the default), every
 * other session of the account (`others`) or all of them (`global`). Their
 * access and refresh tokens are refused from their next use.
 */
export const handler = defineEndpoint({
  name: "auth-logout",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req) => {
    const caller = await requireCaller(req);
    const { scope } = await readOptionalJsonBody(req, logoutBody, getConfig().limits.bodyTimeoutMs);
    // Its own session a caller may always end; ending the account's others needs the second step made.
    const guarded = scope === "local" ? withLiveCaller : withFullCaller;
    const data: LoggedOut = { scope, sessionsEnded: await guarded(caller, endSessions(caller, scope)) };
    return authSuccess(200, "Signed out", data);
  },
});
