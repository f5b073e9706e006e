/**
 * Who is calling a notes endpoint: the verified claims of the bearer token.
 * Every notes handler starts here and hands the claims to
 * `withCallerTransaction`, so the identity that row-level security sees is
 * always the one the token proves.
 *
 * @example
 * ```ts
 * const caller = await requireCaller(req);
 * const page = await withCallerTransaction(caller, listNotes(caller.sub, { limit: 10, offset: 0 }));
 * ```
 */
import { getConfig } from "../config/mod.ts";
import type { CallerClaims } from "../db/caller-transactions.ts";
import { type AccessClaims, jwtFromAuthorization, verifyAccessToken } from "./access-tokens.ts";

/** A verified caller: the token's claims, ready to be set for row-level security. */
export type Caller = AccessClaims & CallerClaims;

/**
 * Verifies the request's `Authorization: Bearer <jwt>` and returns its claims.
 * Throws `UnauthorizedError` (401) for a missing, malformed, expired, forged
 * or otherwise unacceptable token.
 */
export async function requireCaller(req: Request): Promise<Caller> {
  const jwt = jwtFromAuthorization(req.headers.get("authorization"));
  // Spread into an object type, which `CallerClaims`' index signature accepts and an interface is not.
  return { ...await verifyAccessToken(jwt, getConfig().jwtSecret) };
}
