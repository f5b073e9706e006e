/**
 * The `data` that login, register and create-password answer with: the user,
 * a fresh access token in the `"Bearer <jwt>"` form of interface.md, and when
 * that token expires.
 */
import { bearer, type Session } from "./contract.ts";
import type { Account } from "./queries/accounts.ts";
import { signAccessToken } from "./tokens.ts";

/** Signs a token for the account's current token version and pairs it with the user record. */
export async function sessionFor(account: Account, jwtSecret: Uint8Array): Promise<Session> {
  const { jwt, expiresAt } = await signAccessToken(account, jwtSecret);
  return { payload: account.user, accessToken: bearer(jwt), expiresAt: expiresAt.toISOString() };
}
