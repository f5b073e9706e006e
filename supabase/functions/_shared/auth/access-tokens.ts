/**
 * Access tokens: HS256 JWTs with Supabase's claim conventions, so the same
 * token is valid for PostgREST and row-level security when signed with the
 * project's JWT secret. Verification is strict: the algorithm is pinned and
 * `sub`, `exp`, `iat`, `aud` and `role` are required.
 *
 * @example
 * ```ts
 * const jwt = await signAccessToken({ user, tokenVersion: 0, sessionId }, secret);
 * const claims = await verifyAccessToken(jwt, secret);
 * ```
 */
import { errors, jwtVerify, SignJWT } from "jose";
import { z } from "zod";
import { limits } from "../contract/common.ts";
import type { User } from "../contract/accounts.ts";
import { InvalidTokenError } from "../http/errors.ts";
import type { SecondFactorMethod, SessionLevel } from "../queries/sessions.ts";

const secondFactorClaim = z.object({
  id: z.uuid(),
  sealed: z.string().max(200).optional(),
  key_id: z.string().max(32).optional(),
}).nullable();
const amrClaim = z.array(
  z.object({
    method: z.enum(["anonymous", "password", "totp", "recovery_code", "passkey"]),
    timestamp: z.number().int(),
  }),
).max(2);

const algorithm = "HS256";
const audience = "authenticated";

/** The claims this service issues and requires. */
export interface AccessClaims {
  sub: string;
  role: "authenticated";
  aud: "authenticated";
  email: string;
  /** The account's role in this service (`STANDARD_USER` or `ADMIN`). */
  app_role: User["role"];
  /**
   * True for an anonymous account when the token was issued (Supabase's claim). Postgres reads
   * `app.users.is_anonymous` itself; the claim tells the app, and an upgrade is seen on the next refresh.
   */
  is_anonymous: boolean;
  /**
   * The account's `token_version` when the token was issued. Postgres accepts
   * the token only while it still matches (`app.caller_is_active()`), so raising
   * it on a password change or suspension revokes every earlier token. A
   * token without it counts as version 0, the version every account starts at.
   */
  token_version: number;
  /**
   * The session the token was issued for (`app.sessions`, Supabase's claim
   * name). Postgres accepts the token only while that session is live, so a
   * sign-out or a timeout ends it on its next use.
   */
  session_id: string;
  /**
   * The session's level (Supabase's claim): `aal1` after a password, `aal2`
   * after the second factor too. Postgres reads the level from the session
   * itself; the claim tells the app, and a token without it counts as `aal1`.
   */
  aal: SessionLevel["aal"];
  /**
   * How and when the session was authenticated, as Supabase's `amr` claim lists it: a passkey sign-in is `passkey`
   * alone (both factors at once); a passkey as the second step follows `password`; an anonymous account's session is
   * `anonymous`, as Supabase's are, so nothing that trusts `amr` takes it for a password sign-in.
   */
  amr: { method: AmrMethod; timestamp: number }[];
  /**
   * The account's active second factor: its id and, when sealed under `MFA_SECRET_KEY`, its secret
   * (`sealed-secrets.ts`), so that checking a code needs no read of the factor. Absent while the account has none.
   */
  second_factor?: { id: string; sealed?: string; key_id?: string };
  iat: number;
  exp: number;
}

/** A method of the `amr` claim. */
export type AmrMethod = "anonymous" | "password" | "totp" | "recovery_code" | "passkey";

/** A signed access token and the moment it stops being accepted. */
export interface SignedToken {
  jwt: string;
  expiresAt: Date;
}

/** Signs a token for the user's session, at its level, that expires `limits.accessTokenSeconds` after issue. */
export async function signAccessToken(
  account: {
    user: Pick<User, "id" | "email" | "role"> & Partial<Pick<User, "isAnonymous">>;
    tokenVersion: number;
    sessionId: string;
    level: SessionLevel;
  },
  secret: Uint8Array,
): Promise<SignedToken> {
  const { user, tokenVersion, sessionId, level } = account;
  const issuedAt = Math.floor(Date.now() / 1000);
  const expiresAt = issuedAt + limits.accessTokenSeconds;
  const jwt = await new SignJWT({
    role: "authenticated",
    email: user.email,
    app_role: user.role,
    is_anonymous: user.isAnonymous === true,
    token_version: tokenVersion,
    session_id: sessionId,
    ...levelClaims(level, user.isAnonymous === true),
  })
    .setProtectedHeader({ alg: algorithm, typ: "JWT" })
    .setSubject(user.id)
    .setAudience(audience)
    .setIssuedAt(issuedAt)
    .setExpirationTime(expiresAt)
    .sign(secret);
  return { jwt, expiresAt: new Date(expiresAt * 1000) };
}

/** The `aal`, `amr` and `second_factor` claims of a session at `level`, of an anonymous account or not. */
function levelClaims(level: SessionLevel, anonymous: boolean): Pick<AccessClaims, "aal" | "amr" | "second_factor"> {
  const seconds = (at: Date) => Math.floor(at.getTime() / 1000);
  return {
    aal: level.aal,
    amr: anonymous ? [{ method: "anonymous", timestamp: seconds(level.startedAt) }] : amrOf(level, seconds),
    ...(level.factor
      ? {
        second_factor: level.factor.sealed
          ? {
            id: level.factor.id,
            sealed: level.factor.sealed.sealed,
            key_id: level.factor.sealed.keyId,
          }
          : { id: level.factor.id },
      }
      : {}),
  };
}

function amrOf(level: SessionLevel, seconds: (at: Date) => number): AccessClaims["amr"] {
  const second = level.secondFactor;
  if (second?.method === "passkey_sign_in") return [{ method: "passkey", timestamp: seconds(second.at) }];
  const methodOf = (method: SecondFactorMethod): AmrMethod => method === "passkey_sign_in" ? "passkey" : method;
  return [
    { method: "password", timestamp: seconds(level.startedAt) },
    ...(second ? [{ method: methodOf(second.method), timestamp: seconds(second.at) }] : []),
  ];
}

/** A UUID in its canonical text form, as Postgres prints one: the source of a pattern, to build others with. */
export const uuidSource = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
const uuidPattern = new RegExp(`^${uuidSource}$`, "i");

/** How many verified tokens an isolate remembers per secret. */
const verifiedTokensMax = 10_000;
const verifiedTokens = new WeakMap<Uint8Array, Map<string, AccessClaims>>();

/** How far ahead of this server's clock a token's `iat` may lie before the token is refused. */
const maxClockSkewSeconds = 60;

/**
 * Verifies a compact JWT and returns its claims. A token that is genuine but
 * past its `exp` is `token_expired`, so an app can ask its user to log in
 * again; every other failure, whatever jose names it, is `token_invalid`, so
 * a forger learns nothing more.
 *
 * A client sends the same token for up to two hours, so, as PostgREST does,
 * a token that verified once is remembered (per secret, never past its `exp`)
 * instead of running HMAC and the claim checks again on every request.
 * Revocation does not depend on this: Postgres checks it on every request.
 */
export async function verifyAccessToken(jwt: string, secret: Uint8Array): Promise<AccessClaims> {
  let remembered = verifiedTokens.get(secret);
  if (!remembered) verifiedTokens.set(secret, remembered = new Map());
  const known = remembered.get(jwt);
  if (known && known.exp > Date.now() / 1000) return known;
  remembered.delete(jwt);
  const claims = await verifyWithJose(jwt, secret);
  // A Map iterates in insertion order, so the first key is the oldest entry.
  if (remembered.size >= verifiedTokensMax) remembered.delete(remembered.keys().next().value ?? "");
  remembered.set(jwt, claims);
  return claims;
}

async function verifyWithJose(jwt: string, secret: Uint8Array): Promise<AccessClaims> {
  try {
    const { payload } = await jwtVerify(jwt, secret, {
      algorithms: [algorithm],
      audience,
      requiredClaims: ["sub", "exp", "iat", "role", "session_id"],
    });
    const { sub, email, app_role: appRole, token_version: tokenVersion = 0, session_id: sessionId, iat, exp } = payload;
    const secondFactor = secondFactorClaim.safeParse(payload.second_factor ?? null);
    if (
      payload.role !== "authenticated" || !sub || !uuidPattern.test(sub) || !iat || !exp ||
      typeof sessionId !== "string" || !uuidPattern.test(sessionId) ||
      // Issued in the future (beyond clock skew): not a token this service signed now.
      iat > Date.now() / 1000 + maxClockSkewSeconds ||
      typeof tokenVersion !== "number" || !Number.isSafeInteger(tokenVersion) || tokenVersion < 0 ||
      !secondFactor.success
    ) {
      throw new InvalidTokenError("token_invalid");
    }
    return {
      sub,
      role: "authenticated",
      aud: "authenticated",
      email: typeof email === "string" ? email : "",
      app_role: appRole === "ADMIN" ? "ADMIN" : "STANDARD_USER",
      is_anonymous: payload.is_anonymous === true,
      token_version: tokenVersion,
      session_id: sessionId,
      aal: payload.aal === "aal2" ? "aal2" : "aal1",
      amr: amrClaim.safeParse(payload.amr).data ?? [],
      ...(secondFactor.data ? { second_factor: secondFactor.data } : {}),
      iat,
      exp,
    };
  } catch (error) {
    // jose checks the signature before the claims, so only a genuine token is reported as expired.
    if (error instanceof errors.JWTExpired) throw new InvalidTokenError("token_expired");
    if (error instanceof errors.JOSEError) throw new InvalidTokenError("token_invalid");
    throw error;
  }
}

/**
 * The message of a header that is not `Bearer <jwt>` (a bare token, another
 * scheme): it says the form, as the commonest mistake is leaving out `Bearer `.
 * No double quotes, as it also goes into `WWW-Authenticate`'s description.
 */
export const malformedAuthorization = "Malformed Authorization header: it must be Authorization: Bearer " +
  "<accessToken> (login's data.accessToken already reads Bearer <jwt>: send it as it is)";

/**
 * Takes the JWT out of an `Authorization` header. Accepts `Bearer <jwt>` and,
 * for clients that send the login response's `"Bearer <jwt>"` string behind
 * their own `Bearer `, `Bearer Bearer <jwt>`.
 */
export function jwtFromAuthorization(header: string | null): string {
  if (!header) throw new InvalidTokenError("token_missing");
  const match = /^Bearer +(?:Bearer +)?([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)$/i.exec(header.trim());
  if (!match) throw new InvalidTokenError("token_invalid", malformedAuthorization);
  return match[1];
}
