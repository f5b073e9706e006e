/**
 * Access tokens made by the test itself, to try the notes endpoints with
 * tokens the service did not issue: expired, wrongly signed, of another
 * algorithm or audience, or unsigned. Each starts from the claims of a token
 * the service would accept, so every variant differs in one thing only.
 */
import { decodeJwt, type JWTPayload, SignJWT } from "jose";
import type { RegisteredUser } from "./api.ts";
import { testJwtSecret } from "../../dev/harness/stack.ts";

const stackSecret = new TextEncoder().encode(testJwtSecret);

/** The claims the service puts in `user`'s tokens (of its live session), valid for two hours from now. */
export function claimsOf(user: RegisteredUser): JWTPayload {
  const now = Math.floor(Date.now() / 1000);
  return {
    session_id: decodeJwt(user.accessToken.replace(/^Bearer /, "")).session_id,
    sub: user.id,
    role: "authenticated",
    aud: "authenticated",
    email: user.email,
    app_role: "STANDARD_USER",
    iat: now,
    exp: now + 7200,
  };
}

/** Signs `claims` with HS256 and the stack's secret, unless `secret` or `alg` say otherwise. */
export function signToken(
  claims: JWTPayload,
  options: { secret?: string; alg?: "HS256" | "HS384" | "HS512" } = {},
): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: options.alg ?? "HS256", typ: "JWT" })
    .sign(options.secret === undefined ? stackSecret : new TextEncoder().encode(options.secret));
}

/** An unsecured JWT (`alg: none`, empty signature) carrying `claims`. */
export function unsignedToken(claims: JWTPayload): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "none", typ: "JWT" })}.${part(claims)}.`;
}
