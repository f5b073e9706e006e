/**
 * The codes mailed to users: 6-digit password-reset codes (DESIGN.md: 15
 * minutes, 5 attempts, single use), email verification codes (24 hours, 5
 * attempts, single use) and 8-digit sign-in codes (10 minutes, single use,
 * wrong guesses bounded per address). Both are made the same way and stored as an HMAC
 * under a key derived from `JWT_SECRET`, so a copy of the database cannot be
 * searched offline for the code (a plain hash of a 6-digit code falls to 10^6
 * guesses), and Postgres only compares: it hashes nothing.
 *
 * @example
 * ```ts
 * const code = generateCode();
 * const stored = await verificationCodeHash(jwtSecret, "ada@example.com", code);
 * const resetStored = await resetCodeHash(jwtSecret, code);
 * ```
 */
import { limits } from "../contract/common.ts";
import { hexMac } from "./derived-keys.ts";

export const resetCodePolicy = { ttlMinutes: 15, attempts: 5 } as const;
export const verificationCodePolicy = { ttlHours: 24, attempts: 5 } as const;

export const signInCodePolicy = { ttlMinutes: 10 } as const;

/** A uniformly random, zero-padded code of `digits` digits (6 unless told) from the platform's CSPRNG. */
export function generateCode(digits: number = limits.resetCodeDigits): string {
  const codeSpace = 10 ** digits;
  // The largest multiple of codeSpace below 2^32: values above it would bias the low codes.
  const unbiasedCeiling = Math.floor(2 ** 32 / codeSpace) * codeSpace;
  const buffer = new Uint32Array(1);
  do crypto.getRandomValues(buffer); while (buffer[0] >= unbiasedCeiling);
  return String(buffer[0] % codeSpace).padStart(digits, "0");
}

/** A sign-in code: 8 digits. */
export function generateSignInCode(): string {
  return generateCode(limits.signInCodeDigits);
}

/** The mail that carries a sign-in code. */
export function signInCodeMail(code: string) {
  return {
    subject: "Your sign-in code",
    body: `Your sign-in code is ${code}. It expires in ${signInCodePolicy.ttlMinutes} minutes. ` +
      "If you did not ask for it, ignore this mail: nobody can sign in without it.",
  };
}

/** The mail that carries a reset code to its user. */
export function resetCodeMail(code: string) {
  return {
    subject: "Your password reset code",
    body: `Your password reset code is ${code}. It expires in ${resetCodePolicy.ttlMinutes} minutes.`,
  };
}

/** The mail that carries a verification code to a new account's address. */
export function verificationCodeMail(code: string) {
  return {
    subject: "Confirm your email address",
    body: `Your email verification code is ${code}. It expires in ${verificationCodePolicy.ttlHours} hours.`,
  };
}

/** How a verification code for `email` is stored and compared: the HMAC of the address and the code. */
export function verificationCodeHash(jwtSecret: Uint8Array, email: string, code: string): Promise<string> {
  return hexMac(jwtSecret, "email verification code", `${email}\n${code}`);
}

/** How a sign-in code is stored and compared: the HMAC of the code alone, as a reset code's. */
export function signInCodeHash(jwtSecret: Uint8Array, code: string): Promise<string> {
  return hexMac(jwtSecret, "email sign-in code", code);
}

/** How a reset code is stored and compared: the HMAC of the code alone (the drainer makes codes before it knows whose). */
export function resetCodeHash(jwtSecret: Uint8Array, code: string): Promise<string> {
  return hexMac(jwtSecret, "password reset code", code);
}
