/**
 * Device tokens: the "device cookie" defence against password guessing
 * (OWASP). Each successful login answers one, `<user id>.<issued at>.<mac>`
 * with an HMAC-SHA256 under a key derived from `JWT_SECRET`, valid a year. An
 * account over its cap of failed logins still admits a login that sends a
 * device token bound to it, so guessing from elsewhere cannot lock its owner
 * out of the devices they use. Nothing is stored.
 *
 * @example
 * ```ts
 * const token = await issueDeviceToken(userId, jwtSecret);
 * const trusted = await deviceTokenOwner(token, jwtSecret); // userId, or undefined
 * ```
 */
import { base64url } from "jose";
import { derivedKey } from "./derived-keys.ts";
import { uuidSource } from "./tokens.ts";

/** How long a device token is honoured after it was issued. */
export const deviceTokenLifetimeSeconds = 365 * 86_400;

const encoder = new TextEncoder();
const tokenPattern = new RegExp(`^(${uuidSource})\\.(\\d{1,12})\\.([A-Za-z0-9_-]{43})$`);

/** A device token for `userId`, issued now. */
export async function issueDeviceToken(userId: string, jwtSecret: Uint8Array): Promise<string> {
  const signed = `${userId}.${Math.floor(Date.now() / 1000)}`;
  const mac = await crypto.subtle.sign("HMAC", await derivedKey(jwtSecret, "device token"), encoder.encode(signed));
  return `${signed}.${base64url.encode(new Uint8Array(mac))}`;
}

/** The account a genuine, unexpired device token is bound to; undefined for anything else. */
export async function deviceTokenOwner(token: string | undefined, jwtSecret: Uint8Array): Promise<string | undefined> {
  const match = token === undefined ? null : tokenPattern.exec(token);
  if (!match) return undefined;
  const [, userId, issuedAt, mac] = match;
  const age = Date.now() / 1000 - Number(issuedAt);
  if (age < -60 || age > deviceTokenLifetimeSeconds) return undefined;
  const genuine = await crypto.subtle.verify(
    "HMAC",
    await derivedKey(jwtSecret, "device token"),
    new Uint8Array(base64url.decode(mac)),
    encoder.encode(`${userId}.${issuedAt}`),
  );
  return genuine ? userId : undefined;
}
