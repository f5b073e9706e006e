/**
 * Password-reset codes: how they are made, how long they live and how often
 * they may be tried (DESIGN.md: 6 digits, 15 minutes, 5 attempts, single use).
 */
import { limits } from "./contract.ts";

export const resetCodePolicy = { ttlMinutes: 15, attempts: 5 } as const;

const codeSpace = 10 ** limits.resetCodeDigits;
// The largest multiple of codeSpace below 2^32: values above it would bias the low codes.
const unbiasedCeiling = Math.floor(2 ** 32 / codeSpace) * codeSpace;

/** A uniformly random, zero-padded 6-digit code from the platform's CSPRNG. */
export function generateResetCode(): string {
  const buffer = new Uint32Array(1);
  do crypto.getRandomValues(buffer); while (buffer[0] >= unbiasedCeiling);
  return String(buffer[0] % codeSpace).padStart(limits.resetCodeDigits, "0");
}

/** The mail that carries a code to its user. */
export function resetCodeMail(code: string) {
  return {
    subject: "Your password reset code",
    body: `Your password reset code is ${code}. It expires in ${resetCodePolicy.ttlMinutes} minutes.`,
  };
}
