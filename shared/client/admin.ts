/** What an ADMIN account may do to other accounts: `client.admin`. */
import type { ManagedUserList, SecurityEvent, User } from "../../supabase/functions/_shared/contract/mod.ts";
import type { SecurityEventsOptions } from "./auth.ts";
import type { ListNotesOptions } from "./notes.ts";
import type { RequestOptions } from "./options.ts";
import type { Transport } from "./transport.ts";

/** Filters and paging of {@link AdminApi.listUsers}. */
export interface ListUsersOptions extends Pick<ListNotesOptions, "limit" | "offset"> {
  /** Part of the email or name, case-insensitively. */
  query?: string;
  status?: User["status"];
}

/** What an ADMIN account may call: `client.admin`. Others are answered 403 `admin_required`. */
export interface AdminApi {
  /** One page of accounts, newest first, with their note counts (never their notes). */
  listUsers(options?: ListUsersOptions & RequestOptions): Promise<ManagedUserList>;
  /** Suspends (`SUSPENDED`) or reactivates (`ACTIVE`) an account; answers it as updated. */
  setStatus(id: string, status: User["status"], request?: RequestOptions): Promise<User>;
  /** One page of an account's security events, newest first. */
  events(id: string, options?: SecurityEventsOptions & RequestOptions): Promise<SecurityEvent[]>;
  /**
   * Removes the second factor (and recovery codes) of an account whose user lost both, once you have
   * checked who asks; its sessions end. Throws 404 `factor_not_found` when it has none.
   */
  removeSecondFactor(id: string, request?: RequestOptions): Promise<User>;
}

/** The admin calls, through the client's transport. */
export function adminApi(transport: Transport): AdminApi {
  return {
    listUsers: async (options = {}) => {
      const { query, status, limit, offset } = options;
      const deadline = transport.deadline(options);
      return await transport.call("listUsers", {
        query: { query, status, limit, offset },
        deadline,
      }) as ManagedUserList;
    },
    setStatus: async (id, status, request = {}) =>
      ((await transport.call("setUserStatus", { body: { id, status }, deadline: transport.deadline(request) })) as {
        payload: User;
      }).payload,
    events: async (id, options = {}) => {
      const { limit, before } = options;
      const deadline = transport.deadline(options);
      return ((await transport.call("listAccountEvents", { query: { id, limit, before }, deadline })) as {
        events: SecurityEvent[];
      }).events;
    },
    removeSecondFactor: async (id, request = {}) =>
      ((await transport.call("setUserStatus", {
        body: { id, removeMfa: true },
        deadline: transport.deadline(request),
      })) as {
        payload: User;
      }).payload,
  };
}
