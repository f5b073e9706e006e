import { requireCaller } from "../_shared/auth/caller.ts";
import { type EndedSession, endSessionQuery, type SessionList } from "../_shared/contract/accounts.ts";
import { withFullCaller } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { NotFoundError } from "../_shared/http/errors.ts";
import { endSession, listSessions } from "../_shared/queries/sessions.ts";
import { readQuery } from "../_shared/http/request.ts";

/**
 * `GET /auth/sessions`: the live sessions of the caller's account.
 * `DELETE /auth/sessions?id=`: ends one of them; any other id is a 404.
 */
export const handler = defineEndpoint({
  name: "auth-sessions",
  envelope: "auth",
  methods: ["GET", "DELETE"],
  queries: { DELETE: endSessionQuery },
  handle: async (req) => {
    const caller = await requireCaller(req);
    if (req.method === "GET") {
      const data: SessionList = { sessions: await withFullCaller(caller, listSessions(caller)) };
      return authSuccess(200, "Sessions fetched successfully", data);
    }
    const { id } = readQuery(req, endSessionQuery);
    const ended = await withFullCaller(caller, endSession(caller, id));
    if (!ended) throw new NotFoundError("session_not_found", "Session not found");
    const data: EndedSession = { id: ended };
    return authSuccess(200, "Session ended", data);
  },
});
