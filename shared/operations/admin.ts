/** What an ADMIN account may do to other accounts. */
import {
  accountEventsQuery,
  currentUser,
  listUsersQuery,
  managedUserList,
  securityEventList,
  setUserStatusBody,
} from "../../supabase/functions/_shared/contract/mod.ts";
import { adminOnly, always, bodyErrors, type OperationSpec } from "./spec.ts";

/** Their operations, keyed by the typed client's names for them. */
export const adminOperations = {
  listUsers: {
    method: "GET",
    functionName: "admin-users",
    envelope: "auth",
    bearer: true,
    admin: true,
    summary: "List accounts (admin)",
    description: adminOnly + "Accounts newest first, filtered by query (part of the email or name, " +
      "case-insensitively) and status, with each one's note count and last activity; never a note's title " +
      "or content.",
    query: listUsersQuery,
    success: { status: 200, data: managedUserList },
    errors: [400, 401, 403, ...always],
  },
  setUserStatus: {
    method: "POST",
    functionName: "admin-users",
    envelope: "auth",
    bearer: true,
    admin: true,
    summary: "Suspend or reactivate an account, or remove its second factor (admin)",
    description: adminOnly + "With status: SUSPENDED ends every session and token of the account from its next " +
      "request and makes login answer 403; ACTIVE lets it log in again. An admin's own id is a 400, and so is " +
      "suspending an ADMIN (an operator revokes the role first); an unknown id is a 404. With removeMfa: true " +
      "instead, removes the account's second factor and its recovery codes, for a user who lost both (after " +
      "checking who asks), ends the account's sessions and mails its owner; an account without one is 404 " +
      "factor_not_found. An admin's own factor (400 cannot_remove_own_factor: unenroll it with a code) and another " +
      "admin's (400 cannot_remove_admin_factor: an operator removes it) are refused.",
    body: setUserStatusBody,
    success: { status: 200, data: currentUser },
    errors: [...bodyErrors, 401, 403, 404, ...always],
  },
  listAccountEvents: {
    method: "GET",
    functionName: "admin-users",
    subpath: "/events",
    envelope: "auth",
    bearer: true,
    admin: true,
    summary: "An account's security events (admin)",
    description: adminOnly + "The security events of the account id, newest first, a page at a time " +
      "(before = the last id seen). An id that names no account lists none.",
    query: accountEventsQuery,
    success: { status: 200, data: securityEventList },
    errors: [400, 401, 403, ...always],
  },
} as const satisfies Record<string, OperationSpec>;
