/**
 * SQL of managing passkeys (`app.passkeys`): the owner's list, renaming and
 * removing one (never the account's last way in), and an admin's removal of
 * a lost one. Each is one statement; the rules are the migration's functions'.
 *
 * @example
 * ```ts
 * const passkeys = await withFullCaller(caller, listPasskeys(caller.sub));
 * ```
 */
import type { User } from "../contract/accounts.ts";
import type { PasskeyInfo } from "../contract/passkeys.ts";
import type { Query } from "../db/transactions.ts";
import { uuidOrNull } from "../http/uuid.ts";
import { accountColumns, type AccountRow, toAccount } from "./account-rows.ts";
import type { Client } from "./passkeys.ts";

/** The account's columns read from `app.users u`. */
const userColumns = accountColumns.split(", ").map((column) => `u.${column}`).join(", ");

interface PasskeyRow {
  id: string;
  name: string;
  created_at: Date;
  last_used_at: Date | null;
  device_type: string;
  backed_up: boolean;
  aaguid: string;
}

const passkeyColumns = "id, name, created_at, last_used_at, device_type, backed_up, aaguid";

/** A passkey as the API shows it; `authenticatorOf` names its AAGUID where known. */
export function toPasskeyInfo(row: PasskeyRow, authenticatorOf: (aaguid: string) => string | null): PasskeyInfo {
  return {
    id: row.id,
    name: row.name,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    synced: row.device_type === "multiDevice" && row.backed_up,
    authenticator: authenticatorOf(row.aaguid),
  };
}

/** The caller's passkeys, oldest first. */
export function listPasskeys(userId: string): Query<PasskeyRow, PasskeyRow[]> {
  return {
    text: `select ${passkeyColumns} from app.passkeys where user_id = $1 order by created_at, id`,
    values: [userId],
    read: (rows) => rows,
  };
}

/** One of the caller's passkeys, by id; undefined when the account has none of that id. */
export function readPasskey(userId: string, passkeyId: string): Query<PasskeyRow, PasskeyRow | undefined> {
  return {
    text: `select ${passkeyColumns} from app.passkeys where user_id = $1 and id::text = lower($2)`,
    values: [userId, passkeyId],
    read: ([row]) => row,
  };
}

/** Renames one of the caller's passkeys, logged; undefined when the account has none of that id. */
export function renamePasskey(
  input: { userId: string; passkeyId: string; name: string } & Client,
): Query<PasskeyRow, PasskeyRow | undefined> {
  return {
    text: `with renamed as (
             update app.passkeys set name = $3 where user_id = $1 and id::text = lower($2)
             returning ${passkeyColumns}
           ), recorded as (
             select app.record_security_event('passkey_renamed', $1, $1, $4, $5,
                                              jsonb_build_object('passkeyId', renamed.id, 'name', renamed.name))
             from renamed
           )
           select renamed.* from renamed left join recorded on true`,
    values: [input.userId, input.passkeyId, input.name, input.address ?? null, input.userAgent ?? null],
    read: ([row]) => row,
  };
}

/** What a removal found (`app.remove_passkey`). */
export type PasskeyRemoval = "removed" | "not_found" | "last_sign_in_method";

/** Removes one of the caller's passkeys unless it is the account's last way in; logged and mailed. */
export function removePasskey(
  input: { userId: string; passkeyId: string } & Client,
): Query<{ outcome: PasskeyRemoval }, PasskeyRemoval> {
  return {
    text: "select app.remove_passkey($1, $2::uuid, $3, $4) as outcome",
    values: [input.userId, input.passkeyId, input.address ?? null, input.userAgent ?? null],
    read: ([row]) => row.outcome,
  };
}

/** What an admin's removal found (`app.admin_remove_passkey`). */
export type AdminPasskeyRemoval =
  | { kind: "removed"; user: User }
  | { kind: "not_found" | "own_account" | "admin_account" | "unknown_user" };

/**
 * An admin removes another account's lost passkey, never the admin's own account's or another admin's, and the
 * account's sessions end; logged (the admin as the actor) and mailed.
 */
export function adminRemovePasskey(
  userId: string,
  passkeyId: string,
): Query<Partial<AccountRow> & { outcome: string }, AdminPasskeyRemoval> {
  return {
    text: `select removal.outcome, ${userColumns}
           from app.admin_remove_passkey($1::uuid, $2::uuid) as removal(outcome)
           left join app.users u on u.id = $1::uuid and removal.outcome = 'removed'`,
    values: [uuidOrNull(userId), passkeyId],
    read: ([row]) =>
      row.outcome === "removed"
        ? { kind: "removed", user: toAccount(row as AccountRow).user }
        : { kind: row.outcome as "not_found" | "own_account" | "admin_account" | "unknown_user" },
  };
}
