/**
 * What a provider says of its person, read from the checked ID token and, where the ID token leaves the `email` or
 * `profile` claims out, from the UserInfo endpoint: OpenID Connect Core 5.4 lets a provider answer the scopes' claims
 * there only (panva's `oidc-provider` does so by default, `conformIdTokenClaims`), and 5.3.2 says UserInfo's `sub`
 * must be the ID token's (`openid-client`'s `fetchUserInfo` checks it: `processUserInfoResponse` in
 * `oauth4webapi/build/index.js`). Claims that no account column can hold are the provider's fault, refused here as
 * `ProviderClaimsError`, never a database error.
 *
 * @example
 * ```ts
 * const claims = await claimsOf(configuration, tokens, Date.now());
 * ```
 */
import * as oidc from "openid-client";
import { z } from "zod";
import { email } from "../contract/accounts.ts";
import { limits } from "../contract/common.ts";

/**
 * How far in the future an ID token's `iat` may be, for clocks that disagree: `oauth4webapi` checks `exp` and `nbf`
 * but only the type of `iat` (`validateJwt` in `oauth4webapi/build/index.js`), so a token dated ahead is refused here.
 */
export const issuedAtSkewSeconds = 60;

/**
 * What the ID token and UserInfo say of their person: `email` only when it is an address an account could hold (as
 * registering takes one), and the name a new account takes: the provider's, else the address's part before `@`.
 */
export interface ProviderClaims {
  issuer: string;
  subject: string;
  email: string | undefined;
  emailVerified: boolean;
  name: string;
}

/** A provider answer the service cannot use: the callback sends the app `provider_error`. */
export class ProviderClaimsError extends Error {
  override name = "ProviderClaimsError";
}

/** Postgres text holds no NUL; the identity's columns hold a subject of at most 255 characters. */
const withoutNul = (value: string) => !value.includes("\u0000");
const subject = z.string().min(1).max(255).refine(withoutNul, "sub holds NUL");
const optionalText = z.string().refine(withoutNul, "a claim holds NUL").optional().catch(undefined);

/** The claims this service reads; anything else of the provider's is ignored. */
const personClaims = z.looseObject({
  sub: subject,
  email: z.unknown().optional(),
  email_verified: z.unknown().optional(),
  name: z.unknown().optional(),
});

/** The name a new account of these claims takes, within the names accounts take. */
function accountName(claim: unknown, address: string | undefined): string {
  const given = typeof claim === "string" ? claim.trim().slice(0, limits.nameMaxChars) : "";
  return given || address?.split("@")[0].slice(0, limits.nameMaxChars) || "User";
}

function refuse(what: string, detail: string): never {
  throw new ProviderClaimsError(`${what}: ${detail}`);
}

/** The email and name claims of `source`; an address with its own verification flag, never another source's. */
function personOf(source: Record<string, unknown>, where: string) {
  const checked = personClaims.safeParse(source);
  if (!checked.success) refuse(`the provider's ${where}`, checked.error.issues.map((i) => i.message).join("; "));
  const name = typeof checked.data.name === "string" ? checked.data.name : undefined;
  if (name !== undefined && !withoutNul(name)) refuse(`the provider's ${where}`, "name holds NUL");
  const rawEmail = optionalText.parse(checked.data.email);
  return {
    sub: checked.data.sub,
    email: rawEmail,
    // Apple sends the string "true".
    emailVerified: checked.data.email_verified === true || checked.data.email_verified === "true",
    name,
  };
}

/**
 * The person of a token response whose ID token openid-client checked: `iat` no further ahead than the skew, then
 * the ID token's claims, completed from UserInfo (one more request to the provider, no database round trip) when
 * it lacks the email or the name.
 */
export async function claimsOf(
  configuration: oidc.Configuration,
  tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers,
  nowMs: number,
): Promise<ProviderClaims> {
  const idToken = tokens.claims();
  if (!idToken) refuse("the token response", "no ID token");
  if (idToken.iat > nowMs / 1000 + issuedAtSkewSeconds) refuse("the ID token", "iat is in the future");
  const fromIdToken = personOf(idToken, "ID token");
  const needsUserInfo = fromIdToken.email === undefined || fromIdToken.name === undefined;
  const fromUserInfo = needsUserInfo
    ? personOf(await oidc.fetchUserInfo(configuration, tokens.access_token, idToken.sub), "UserInfo")
    : undefined;
  const stated = fromIdToken.email !== undefined ? fromIdToken : fromUserInfo;
  const address = email.safeParse(stated?.email);
  const usable = address.success ? address.data : undefined;
  return {
    issuer: idToken.iss,
    subject: fromIdToken.sub,
    email: usable,
    emailVerified: usable !== undefined && stated?.emailVerified === true,
    name: accountName(fromIdToken.name ?? fromUserInfo?.name, usable),
  };
}
