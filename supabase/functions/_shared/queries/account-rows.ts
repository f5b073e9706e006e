/**
 * An account as the SQL of `app.users` reads it (`AccountRow`, never the
 * password hash) and as the functions use it (`Account`): the one home of the
 * types that the account and the session statements both need.
 *
 * @example
 * ```ts
 * const text = `select ${accountColumns} from app.users where id = $1`;
 * const account = toAccount(row);
 * ```
 */
import type { User } from "../contract/accounts.ts";

/** A row of `app.users` as these statements return it: never the password hash. */
export interface AccountRow {
  id: string;
  name: string;
  phone_number: string | null;
  /** Null for an anonymous account, which has none until it signs up. */
  email: string | null;
  role: User["role"];
  status: User["status"];
  is_verified: boolean;
  /**
   * Absent from the rows of the SQL functions older than anonymous accounts (a password change, a reset, a
   * verification, the second step), none of which can act on an anonymous account: read as false.
   */
  is_anonymous?: boolean;
  created_at: Date;
  updated_at: Date;
  token_version: number;
}

const accountColumnNames = [
  "id",
  "name",
  "phone_number",
  "email",
  "role",
  "status",
  "is_verified",
  "is_anonymous",
  "created_at",
  "updated_at",
  "token_version",
] as const satisfies readonly (keyof AccountRow)[];

/** The columns an `AccountRow` is read from; built once, not per request. */
export const accountColumns = accountColumnNames.join(", ");

/** A user and the token version its access tokens must carry (see `app.users.token_version`). */
export interface Account {
  user: User;
  tokenVersion: number;
}

export function toAccount(row: AccountRow): Account {
  return {
    user: {
      id: row.id,
      name: row.name,
      phoneNumber: row.phone_number,
      email: row.email ?? "",
      role: row.role,
      status: row.status,
      isVerified: row.is_verified,
      isAnonymous: row.is_anonymous === true,
      createdAt: row.created_at.toISOString(),
      updatedAt: row.updated_at.toISOString(),
    },
    tokenVersion: row.token_version,
  };
}
