/**
 * Recovery codes: ten single-use codes shown once when a second factor is
 * activated (or the codes replaced), for the day the authenticator is lost.
 * Each is 25 base32 characters (125 bits, over the 112 OWASP ASVS 6.5.2 asks of
 * a code kept under a plain hash) in groups of five; the database
 * keeps only its HMAC under a key derived from the server secret, bound to
 * the account, so a copy of the table yields no code and no code of one
 * account passes for another's.
 *
 * @example
 * ```ts
 * const codes = newRecoveryCodes(); // ["k3m9q-…", …]
 * const stored = await recoveryCodeHash(jwtSecret, userId, codes[0]);
 * ```
 */
import { hexMac } from "./derived-keys.ts";

export const recoveryCodePolicy = {
  count: 10,
  groups: 5,
  groupLength: 5,
} as const;

/** RFC 4648's base32 alphabet, lower-cased: no 0, 1 or 8 to mistake for o, l or b. */
const alphabet = "abcdefghijklmnopqrstuvwxyz234567";

/** One code: `groups` groups of `groupLength` characters from the platform's CSPRNG (5 bits each, unbiased). */
function newRecoveryCode(): string {
  const { groups, groupLength } = recoveryCodePolicy;
  const bytes = crypto.getRandomValues(new Uint8Array(groups * groupLength));
  const characters = Array.from(bytes, (byte) => alphabet[byte % alphabet.length]);
  return Array.from(
    { length: groups },
    (_, group) => characters.slice(group * groupLength, (group + 1) * groupLength).join(""),
  ).join("-");
}

export function newRecoveryCodes(): string[] {
  return Array.from({ length: recoveryCodePolicy.count }, newRecoveryCode);
}

/** A code as typed: case, spaces and dashes do not matter. */
function normalized(code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, "");
}

/** How a recovery code of `userId` is stored and compared: hex HMAC-SHA256 of the account and the code. */
export function recoveryCodeHash(jwtSecret: Uint8Array, userId: string, code: string): Promise<string> {
  return hexMac(jwtSecret, "recovery code", `${userId}\n${normalized(code)}`);
}
