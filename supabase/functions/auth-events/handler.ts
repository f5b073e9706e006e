import { requireCaller } from "../_shared/auth/caller.ts";
import { type SecurityEventList, securityEventsQuery } from "../_shared/contract/accounts.ts";
import { withFullCaller } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { listSecurityEvents } from "../_shared/queries/security-events.ts";
import { readQuery } from "../_shared/http/request.ts";

/**
 * `GET /auth/events?limit=&before=`: the caller's own security events, newest
 * first, so a user can spot a sign-in or a change they did not make. An
 * admin's act shows as such, without the admin's address or user agent.
 */
export const handler = defineEndpoint({
  name: "auth-events",
  envelope: "auth",
  methods: ["GET"],
  queries: { GET: securityEventsQuery },
  handle: async (req) => {
    const caller = await requireCaller(req);
    const { limit, before } = readQuery(req, securityEventsQuery);
    const data: SecurityEventList = {
      events: await withFullCaller(caller, listSecurityEvents(caller.sub, { limit, before }, "account")),
    };
    return authSuccess(200, "Events fetched successfully", data);
  },
});
