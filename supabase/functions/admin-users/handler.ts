import { requireCaller } from "../_shared/auth/caller.ts";
import { clientAddress, type ConnectionInfo, userAgentOf } from "../_shared/http/client-address.ts";
import { getConfig } from "../_shared/config/mod.ts";
import type { CurrentUser, SecurityEventList } from "../_shared/contract/accounts.ts";
import {
  accountEventsQuery,
  listUsersQuery,
  type ManagedUserList,
  setUserStatusBody,
} from "../_shared/contract/admin.ts";
import { type AdminContext, withAdminCaller } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { BadRequestError, NotFoundError } from "../_shared/http/errors.ts";
import { listUsers, setUserStatus } from "../_shared/queries/admin-users.ts";
import { removeSecondFactor } from "../_shared/queries/second-factors.ts";
import { adminRemovePasskey } from "../_shared/queries/passkey-management.ts";
import { listSecurityEvents } from "../_shared/queries/security-events.ts";
import { readJsonBody, readQuery } from "../_shared/http/request.ts";
import { routeBySubpath } from "../_shared/http/router.ts";

/** The admin's client, recorded with the events its changes cause. */
function adminContextOf(req: Request, info: ConnectionInfo | undefined): AdminContext {
  return { address: clientAddress(req, info, getConfig().limits), userAgent: userAgentOf(req) };
}

/**
 * `GET /admin-users?query=&status=&limit=&offset=`: accounts, newest first.
 * `POST /admin-users` `{id, status}`: suspends or reactivates one, never an
 * admin's own and never suspends an admin (400); `{id, removeMfa: true}`
 * removes its lost second factor and ends its sessions, never an admin's own
 * or another admin's (400); `{id, removePasskey}` removes one lost passkey of the account, on the same terms. All
 * answer 403
 * `admin_required` unless the caller's account is an ADMIN now.
 */
const users = defineEndpoint({
  name: "admin-users",
  envelope: "auth",
  methods: ["GET", "POST"],
  queries: { GET: listUsersQuery },
  handle: async (req, info) => {
    const caller = await requireCaller(req);
    if (req.method === "GET") {
      const filter = readQuery(req, listUsersQuery);
      const page = await withAdminCaller(caller, adminContextOf(req, info), listUsers(filter));
      const data: ManagedUserList = {
        users: page.users,
        pagination: {
          total: page.total,
          limit: filter.limit,
          offset: filter.offset,
          hasMore: filter.offset + page.users.length < page.total,
        },
      };
      return authSuccess(200, "Users fetched successfully", data);
    }
    const { id, status, removeMfa, removePasskey } = await readJsonBody(
      req,
      setUserStatusBody,
      getConfig().limits.bodyTimeoutMs,
    );
    if (removePasskey) {
      const removal = await withAdminCaller(caller, adminContextOf(req, info), adminRemovePasskey(id, removePasskey));
      if (removal.kind === "removed") {
        const data: CurrentUser = { payload: removal.user };
        return authSuccess(200, "Passkey removed", data);
      }
      if (removal.kind === "unknown_user") throw new NotFoundError("user_not_found", "User not found");
      if (removal.kind === "not_found") throw new NotFoundError("passkey_not_found", "The user has no such passkey");
      const message = removal.kind === "own_account"
        ? "An admin cannot remove its own passkeys here: remove them from its own session"
        : "An admin's passkey cannot be removed by another admin; an operator must do it";
      throw new BadRequestError(message, [{ field: "id", message }], {
        code: removal.kind === "own_account" ? "cannot_remove_own_factor" : "cannot_remove_admin_factor",
      });
    }
    if (removeMfa) {
      const removal = await withAdminCaller(
        caller,
        adminContextOf(req, info),
        removeSecondFactor(id),
      );
      if (removal.kind === "unknown-user") {
        throw new NotFoundError("user_not_found", "User not found");
      }
      if (removal.kind === "own-account") {
        const message = "An admin cannot remove its own second factor: unenroll it with a code";
        throw new BadRequestError(message, [{ field: "id", message }], {
          code: "cannot_remove_own_factor",
        });
      }
      if (removal.kind === "admin-account") {
        const message = "An admin's second factor cannot be removed by another admin; an operator must do it";
        throw new BadRequestError(message, [{ field: "id", message }], {
          code: "cannot_remove_admin_factor",
        });
      }
      if (removal.kind === "no-factor") {
        throw new NotFoundError(
          "factor_not_found",
          "The user has no second factor",
        );
      }
      const data: CurrentUser = { payload: removal.user };
      return authSuccess(200, "Second factor removed", data);
    }
    if (!status) throw new BadRequestError("send one of status, removeMfa or removePasskey");
    const change = await withAdminCaller(caller, adminContextOf(req, info), setUserStatus({ id, status }));
    if (change.kind === "own-account") {
      const message = "An admin cannot change its own status";
      throw new BadRequestError(message, [{ field: "id", message }], { code: "cannot_change_own_status" });
    }
    if (change.kind === "admin-account") {
      const message = "An admin cannot be suspended; an operator must revoke the role first";
      throw new BadRequestError(message, [{ field: "id", message }], { code: "cannot_suspend_admin" });
    }
    if (change.kind === "unknown-user") throw new NotFoundError("user_not_found", "User not found");
    const data: CurrentUser = { payload: change.user };
    return authSuccess(200, status === "SUSPENDED" ? "User suspended" : "User reactivated", data);
  },
});

/** `GET /admin-users/events?id=&limit=&before=`: one account's security events, newest first. */
const events = defineEndpoint({
  name: "admin-users",
  envelope: "auth",
  methods: ["GET"],
  queries: { GET: accountEventsQuery },
  handle: async (req, info) => {
    const caller = await requireCaller(req);
    const { id, limit, before } = readQuery(req, accountEventsQuery);
    const data: SecurityEventList = {
      events: await withAdminCaller(
        caller,
        adminContextOf(req, info),
        listSecurityEvents(id, { limit, before }, "admin"),
      ),
    };
    return authSuccess(200, "Events fetched successfully", data);
  },
});

/** The admin API: accounts at `/admin-users`, their security events at `/admin-users/events`. */
export const handler = routeBySubpath("admin-users", { "/": users, "/events": events });
