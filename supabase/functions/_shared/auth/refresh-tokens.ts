/**
 * Refresh tokens: `<session id>.<generation>.<mac>`, where the MAC is an
 * HMAC-SHA256 of the session id and generation under a key derived from
 * `JWT_SECRET` (`derived-keys.ts`). Nothing is stored: Postgres keeps only each session's current
 * generation, so a copy of the database yields no usable token, and the token
 * of any generation can be recognised, which is what lets an old generation
 * presented again be caught as reuse (theft) rather than as an unknown token.
 *
 * A token that is malformed or whose MAC does not verify is refused here,
 * before the database is asked, so junk cannot touch the real session.
 *
 * @example
 * ```ts
 * const token = await issueRefreshToken({ sessionId, generation: 0 }, jwtSecret);
 * const presented = await readRefreshToken(token, jwtSecret); // { sessionId, generation }
 * ```
 */
import { base64url } from "jose";
import { derivedKey, macSource } from "./derived-keys.ts";
import { InvalidRefreshTokenError } from "../http/errors.ts";
import { uuidSource } from "./access-tokens.ts";

/** The session and generation a refresh token speaks for. */
export interface RefreshTokenClaims {
  sessionId: string;
  generation: number;
}

const encoder = new TextEncoder();
const tokenPattern = new RegExp(`^(${uuidSource})\\.(0|[1-9]\\d{0,9})\\.(${macSource})$`);

function signedPart({ sessionId, generation }: RefreshTokenClaims): Uint8Array<ArrayBuffer> {
  return encoder.encode(`${sessionId}.${generation}`);
}

/** The refresh token of the session's `generation`: 256 bits of MAC that only the server can make. */
export async function issueRefreshToken(claims: RefreshTokenClaims, jwtSecret: Uint8Array): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await derivedKey(jwtSecret, "refresh token"), signedPart(claims));
  return `${claims.sessionId}.${claims.generation}.${base64url.encode(new Uint8Array(mac))}`;
}

/**
 * The session and generation of a refresh token this service issued. Throws
 * `InvalidRefreshTokenError` (401 `refresh_token_invalid`) for anything else:
 * malformed, tampered or made with another key. The MAC is checked with
 * WebCrypto's `verify`, which compares in constant time.
 */
export async function readRefreshToken(token: string, jwtSecret: Uint8Array): Promise<RefreshTokenClaims> {
  const match = tokenPattern.exec(token);
  if (!match) throw new InvalidRefreshTokenError("refresh_token_invalid");
  const claims = { sessionId: match[1], generation: Number(match[2]) };
  // Ten digits allow more than Postgres's integer holds.
  if (claims.generation > 2_147_483_647) {
    throw new InvalidRefreshTokenError("refresh_token_invalid");
  }
  const genuine = await crypto.subtle.verify(
    "HMAC",
    await derivedKey(jwtSecret, "refresh token"),
    new Uint8Array(base64url.decode(match[3])),
    signedPart(claims),
  );
  if (!genuine) throw new InvalidRefreshTokenError("refresh_token_invalid");
  return claims;
}
