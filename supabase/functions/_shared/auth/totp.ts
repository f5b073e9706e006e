/**
 * TOTP codes (RFC 6238) in the form every authenticator app reads: SHA-1,
 * 6 digits, a new code every 30 seconds. `otpauth` makes and checks the codes;
 * this module fixes the parameters and says which time step a code belongs to,
 * so the database can refuse a step it already accepted (RFC 6238 §5.2).
 *
 * @example
 * ```ts
 * const secret = newTotpSecret();
 * const url = otpauthUrl(secret, "ada@example.com");
 * const step = matchedStep(secret, "123456"); // undefined: no step of now ±1 has this code
 * ```
 */
import { Secret, TOTP } from "otpauth";

export const totpPolicy = {
  algorithm: "SHA1",
  digits: 6,
  periodSeconds: 30,
  /** Steps either side of now whose codes are accepted: a clock off by up to 30 s, or a code typed late. */
  window: 1,
  /** 160 bits, as RFC 4226 recommends. */
  secretBytes: 20,
  issuer: "Notes",
} as const;

function totpOf(secretBase32: string, email = ""): TOTP {
  return new TOTP({
    issuer: totpPolicy.issuer,
    label: email,
    secret: Secret.fromBase32(secretBase32),
    algorithm: totpPolicy.algorithm,
    digits: totpPolicy.digits,
    period: totpPolicy.periodSeconds,
  });
}

/** A new random secret, in base32 as authenticator apps take it typed in. */
export function newTotpSecret(): string {
  return new Secret({ size: totpPolicy.secretBytes }).base32;
}

/** `otpauth://totp/Notes:<email>?secret=…&issuer=Notes&algorithm=SHA1&digits=6&period=30`, for a QR code. */
export function otpauthUrl(secretBase32: string, email: string): string {
  return totpOf(secretBase32, email).toString();
}

/** The time step (Unix seconds / 30) of `at`. */
export function timeStepOf(at: number): number {
  return Math.floor(at / 1000 / totpPolicy.periodSeconds);
}

/**
 * The time step whose code `code` is, among the steps of `at` ±1; undefined
 * when it is none of them. `otpauth` compares in constant time.
 */
export function matchedStep(secretBase32: string, code: string, at = Date.now()): number | undefined {
  const delta = totpOf(secretBase32).validate({ token: code, timestamp: at, window: totpPolicy.window });
  return delta === null ? undefined : timeStepOf(at) + delta;
}

/** The code of the time step of `at`: what an authenticator app shows then (for tests and the bench). */
export function codeAt(secretBase32: string, at: number): string {
  return totpOf(secretBase32).generate({ timestamp: at });
}
