import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { isOneOf } from "../_shared/http/api-key.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { UnauthorizedError } from "../_shared/http/errors.ts";
import { dispatchRemovals } from "../_shared/attachments/removals.ts";
import { requireObjectStore } from "../_shared/attachments/store.ts";

/**
 * `POST /attachments-dispatch`: gives up the pending uploads past their expiry and removes the queued objects from
 * the store, retrying what it does not confirm on a later call. Supabase Cron calls it every minute (migration
 * 20261129000110); it takes the same secret as `mail-dispatch` (`MAIL_DISPATCH_SECRET` or the service role key).
 */
export const handler = defineEndpoint({
  name: "attachments-dispatch",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req) => {
    const given = /^Bearer (\S+)$/.exec(req.headers.get("authorization") ?? "")?.[1];
    if (!given || !isOneOf(given, getConfig().mailDispatchSecrets)) {
      throw new UnauthorizedError(
        "invalid_dispatch_secret",
        "attachments-dispatch needs its secret in Authorization: Bearer",
      );
    }
    return authSuccess(200, "Attachment removals dispatched", await dispatchRemovals(requireObjectStore()));
  },
});
