/**
 * The `data` that login, register, create-password and refresh answer with:
 * the user, a fresh access token in the `"Bearer <jwt>"` form of
 * interface.md, when that token expires, the session's current refresh
 * token, and whether the second step of the sign-in is still to come.
 */
import type { SessionSettings } from "../config/mod.ts";
import { bearer, type Session } from "../contract/accounts.ts";
import type { Account } from "../queries/account-rows.ts";
import type { NewSession, SessionGrant } from "../queries/sessions.ts";
import { issueDeviceToken } from "./device-tokens.ts";
import { issueRefreshToken } from "./refresh-tokens.ts";
import { signAccessToken } from "./access-tokens.ts";
import { userAgentOf } from "../http/client-address.ts";

/**
 * Signs an access token for the account's session and pairs it with the user
 * and the refresh token; a sign-in (a grant with its device generation) also
 * answers this device's device token.
 */
export async function sessionFor(account: Account, grant: SessionGrant, jwtSecret: Uint8Array): Promise<Session> {
  const { deviceGeneration } = grant;
  const [{ jwt, expiresAt }, refreshToken, deviceToken] = await Promise.all([
    signAccessToken({ ...account, sessionId: grant.sessionId, level: grant.level }, jwtSecret),
    issueRefreshToken(grant, jwtSecret),
    deviceGeneration === undefined ? undefined : issueDeviceToken(account.user.id, deviceGeneration, jwtSecret),
  ]);
  return {
    payload: account.user,
    accessToken: bearer(jwt),
    expiresAt: expiresAt.toISOString(),
    refreshToken,
    // The account has a factor and this session has not made the second step: only POST /auth/mfa/verify (or
    // /auth/mfa/recover), GET /auth/user and a sign-out answer it.
    mfaRequired: grant.level.aal === "aal1" && grant.level.factor !== undefined,
    ...(deviceToken ? { deviceToken } : {}),
  };
}

/** The session a sign-in from `req` at `address` starts: the timeouts, and the device as its user will see it. */
export function newSessionOf(req: Request, address: string | undefined, settings: SessionSettings): NewSession {
  return { settings, userAgent: userAgentOf(req), address };
}
