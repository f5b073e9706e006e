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
import { type CallerClaims, signUpBeforeAddingFactors } from "../db/caller-transactions.ts";
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

/**
 * As `requireCaller`, for what only an account that has signed up may add (a second factor, a passkey): an anonymous
 * account's token is refused at once, 403 `sign_up_required`, before a password is asked for that it does not have or
 * a proof it cannot give. The token's claim decides here; Postgres refuses an anonymous account's factor or passkey
 * itself whatever a token says (the triggers of migration 20261128000800).
 */
export async function requireSignedUpCaller(req: Request): Promise<Caller> {
  const caller = await requireCaller(req);
  if (caller.is_anonymous) throw signUpBeforeAddingFactors();
  return caller;
}
