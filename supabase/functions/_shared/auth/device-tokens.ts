/**
 * Device tokens: the "device cookie" defence against password guessing
 * (OWASP). Each sign-in answers one, `<user id>.<device generation>.<issued
 * at>.<mac>` with an HMAC-SHA256 under a key derived from `JWT_SECRET`, valid
 * 90 days. An account over its cap of failed logins still admits a login that
 * sends a device token bound to it, so guessing from elsewhere cannot lock its
 * owner out of the devices they use. It is no unlimited pass: its own
 * failures are capped (`LOGIN_MAX_FAILURES_PER_DEVICE`), and it holds only
 * while the account's device generation is the one it carries, which a
 * password change or reset, a suspension and a global sign-out raise
 * (`app.take_login_attempt` compares them). Nothing is stored.
 *
 * @example
 * ```ts
 * const token = await issueDeviceToken(userId, deviceGeneration, jwtSecret);
 * const device = await trustedDevice(token, jwtSecret); // { userId, generation, key }, or undefined
 * ```
 */
import { base64url } from "jose";
import type { TrustedDevice } from "../queries/rate-limits.ts";
import { derivedKey, macSource } from "./derived-keys.ts";
import { uuidSource } from "./access-tokens.ts";

/** How long a device token is honoured after it was issued; every sign-in answers a fresh one. */
export const deviceTokenLifetimeSeconds = 90 * 86_400;

const encoder = new TextEncoder();
const tokenPattern = new RegExp(`^((${uuidSource})\\.(\\d{1,9})\\.(\\d{1,12}))\\.(${macSource})$`);

async function macOf(signed: string, jwtSecret: Uint8Array): Promise<Uint8Array> {
  const key = await derivedKey(jwtSecret, "device token");
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(signed)));
}

/** A device token for `userId` under the account's current device `generation`, issued now. */
export async function issueDeviceToken(userId: string, generation: number, jwtSecret: Uint8Array): Promise<string> {
  const signed = `${userId}.${generation}.${Math.floor(Date.now() / 1000)}`;
  return `${signed}.${base64url.encode(await macOf(signed, jwtSecret))}`;
}

/** What a genuine, unexpired device token claims; undefined for anything else. */
export async function trustedDevice(
  token: string | undefined,
  jwtSecret: Uint8Array,
): Promise<TrustedDevice | undefined> {
  const match = token === undefined ? null : tokenPattern.exec(token);
  if (!match) return undefined;
  const [, signed, userId, generation, issuedAt, mac] = match;
  const age = Date.now() / 1000 - Number(issuedAt);
  if (age < -60 || age > deviceTokenLifetimeSeconds) return undefined;
  const genuine = await crypto.subtle.verify(
    "HMAC",
    await derivedKey(jwtSecret, "device token"),
    new Uint8Array(base64url.decode(mac)),
    encoder.encode(signed),
  );
  return genuine ? { userId, generation: Number(generation), key: signed } : undefined;
}
