/**
 * A new email verification code: made, stored as its HMAC, and put in the mail
 * that carries it. Register sends one; resend-verification replaces it.
 *
 * @example
 * ```ts
 * const verification = await newVerificationCode(jwtSecret, "ada@example.com");
 * ```
 */
import { generateCode, verificationCodeHash, verificationCodeMail, verificationCodePolicy } from "./one-time-codes.ts";
import type { NewVerificationCode } from "../queries/accounts.ts";

export async function newVerificationCode(jwtSecret: Uint8Array, email: string): Promise<NewVerificationCode> {
  const code = generateCode();
  return {
    codeHash: await verificationCodeHash(jwtSecret, email, code),
    ...verificationCodePolicy,
    mail: verificationCodeMail(code),
  };
}
