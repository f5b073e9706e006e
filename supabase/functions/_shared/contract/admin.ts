/**
 * The contract of the admin endpoints: listing accounts, suspending and
 * reactivating them, and reading one account's security log.
 */
import { z } from "zod";
import type { ErrorCode } from "./error-codes.ts";
import { securityEventsQuery, user } from "./accounts.ts";
import { integerParameter, isoTimestamp, limits, pageLimit, pagination, text, userStatuses } from "./common.ts";

/** Query of `GET /admin-users/events`: a page of one account's events. */
export const accountEventsQuery = securityEventsQuery.extend({ id: text("id") });
export type AccountEventsQuery = z.infer<typeof accountEventsQuery>;

/** An account as an admin sees it: the user record, how many notes it has (never what they say), when last active. */
export const managedUser = user.extend({
  noteCount: z.number().int(),
  lastActiveAt: isoTimestamp.nullable().meta({ description: "when a session of it last started or refreshed" }),
});
export type ManagedUser = z.infer<typeof managedUser>;

/** `data` of `GET /admin-users`. */
export const managedUserList = z.object({ users: z.array(managedUser), pagination });
export type ManagedUserList = z.infer<typeof managedUserList>;

const userStatus = z.enum(userStatuses, { error: `status must be one of ${userStatuses.join(", ")}` });

/** Query of `GET /admin-users`. */
export const listUsersQuery = z.object({
  query: text("query")
    .max(limits.userQueryMaxChars, `query must be at most ${limits.userQueryMaxChars} characters`)
    .optional()
    .meta({ description: "part of the email or name, case-insensitively" }),
  status: userStatus.optional(),
  limit: pageLimit(limits.listLimitMax, limits.listLimitDefault),
  offset: integerParameter("offset", 0, Number.MAX_SAFE_INTEGER, 0),
});
export type ListUsersQuery = z.infer<typeof listUsersQuery>;

/**
 * Body of `POST /admin-users`: suspend (`SUSPENDED`) or reactivate (`ACTIVE`) an account, or remove its lost
 * second factor (`removeMfa: true`): one of the two.
 */
export const setUserStatusBody = z.object({
  id: text("id"),
  status: userStatus.optional(),
  removeMfa: z.literal(true, { error: "removeMfa must be true" }).optional().meta({
    description: "true removes the account's second factor and its recovery codes, and ends its sessions",
  }),
  removePasskey: text("removePasskey").regex(
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
    "removePasskey must be a passkey's id",
  ).optional().meta({ description: "removes this passkey of the account (a lost one), and ends its sessions" }),
}).refine(
  (body) => [body.status, body.removeMfa, body.removePasskey].filter((field) => field !== undefined).length === 1,
  { error: "send one of status, removeMfa or removePasskey", path: ["status"] },
);
export type SetUserStatusBody = z.infer<typeof setUserStatusBody>;

/** The `code` of a 403 from an admin endpoint: the caller's account is not an ADMIN (now). */
export const adminRequiredCode = "admin_required" satisfies ErrorCode;
