/**
 * The `data` that login, register and create-password answer with: the user
 * and a fresh access token in the `"Bearer <jwt>"` form of interface.md.
 */
import type { Session, User } from "./contract.ts";
import { bearer, signAccessToken } from "./tokens.ts";

/** Signs a token for `user` and pairs it with the user record. */
export async function sessionFor(user: User, jwtSecret: Uint8Array): Promise<Session> {
  return { payload: user, accessToken: bearer(await signAccessToken(user, jwtSecret)) };
}
