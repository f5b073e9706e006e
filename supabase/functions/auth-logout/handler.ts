import { requireCaller } from "../_shared/caller.ts";
import { getConfig } from "../_shared/config.ts";
import { type LoggedOut, logoutBody } from "../_shared/contract.ts";
import { withLiveCaller } from "../_shared/db.ts";
import { defineEndpoint } from "../_shared/endpoint.ts";
import { authSuccess } from "../_shared/envelopes.ts";
import { endSessions } from "../_shared/queries/sessions.ts";
import { readOptionalJsonBody } from "../_shared/request.ts";

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
    const data: LoggedOut = { scope, sessionsEnded: await withLiveCaller(caller, endSessions(caller, scope)) };
    return authSuccess(200, "Signed out", data);
  },
});
