/**
 * The `data` that login, register and create-password answer with: the user
 * and a fresh access token in the `"Bearer <jwt>"` form of interface.md.
 */
import type { Session } from "./contract.ts";
import type { Account } from "./queries/accounts.ts";
import { bearer, signAccessToken } from "./tokens.ts";

/** Signs a token for the account's current token version and pairs it with the user record. */
export async function sessionFor(account: Account, jwtSecret: Uint8Array): Promise<Session> {
  return { payload: account.user, accessToken: bearer(await signAccessToken(account, jwtSecret)) };
}
