/**
 * A new email verification code: made, stored as its HMAC, and put in the mail
 * that carries it. Register sends one; resend-verification replaces it. And
 * the 429 message both verification endpoints answer past their address limit.
 *
 * @example
 * ```ts
 * const verification = await newVerificationCode(jwtSecret, "ada@example.com");
 * ```
 */
import { generateCode, verificationCodeHash, verificationCodeMail, verificationCodePolicy } from "./one-time-codes.ts";
import type { NewVerificationCode } from "../queries/accounts.ts";

/** The 429 message of the per-address limit of verify-email and resend-verification. */
export const tooManyVerifications = "Too many verification attempts; try again later";

/** A fresh code for `email`, its HMAC under `jwtSecret`, its lifetime and tries, and its mail. */
export async function newVerificationCode(jwtSecret: Uint8Array, email: string): Promise<NewVerificationCode> {
  const code = generateCode();
  return {
    codeHash: await verificationCodeHash(jwtSecret, email, code),
    ...verificationCodePolicy,
    mail: verificationCodeMail(code),
  };
}
