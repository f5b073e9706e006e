/**
 * What a request to the second factor proves, worked out in the function
 * before its one statement: the time step the code of the authenticator
 * matched (checked against the factor's secret, which the caller's access
 * token carries sealed), or the keyed hash of a recovery code. And the answer
 * to an attempt the database refused.
 *
 * @example
 * ```ts
 * const proof = await proofOf(caller, { code: "123456" }, jwtSecret);
 * if (step.kind !== "accepted") throw refusedAttempt(step);
 * ```
 */
import type { Caller } from "./caller.ts";
import { BadRequestError, type HttpError, NotFoundError, TooManyRequestsError } from "../http/errors.ts";
import type { FactorProof, RefusedAttempt, SealedSecret } from "../queries/second-factors.ts";
import { recoveryCodeHash } from "./recovery-codes.ts";
import { unsealSecret } from "./sealed-secrets.ts";
import { matchedStep } from "./totp.ts";

export const invalidFactorCode = "Invalid or expired code";
export const noFactor = "The account has no such second factor";

/**
 * The time step `code` matched for the secret sealed in `sealed`; undefined for none. A secret this server cannot
 * open (sealed under another `JWT_SECRET`) is a server error, never a wrong code: it must not lock its owner out.
 */
export async function matchedStepOf(
  sealed: SealedSecret,
  code: string,
  jwtSecret: Uint8Array,
): Promise<number | undefined> {
  const secret = await unsealSecret(jwtSecret, sealed);
  if (secret === undefined) {
    throw new Error(`a second-factor secret sealed under key ${sealed.keyId} does not open: was JWT_SECRET changed?`);
  }
  return matchedStep(secret, code);
}

/**
 * The proof in `body` for the factor the caller's token names: a code, or a
 * recovery code. Throws 404 `factor_not_found` when the token names no
 * factor (the account has none, or had none when the token was issued).
 */
export async function proofOf(
  caller: Caller,
  body: { code?: string; recoveryCode?: string },
  jwtSecret: Uint8Array,
): Promise<{ factorId: string; proof: FactorProof }> {
  const factor = caller.second_factor;
  if (!factor) throw new NotFoundError("factor_not_found", noFactor);
  if (body.recoveryCode !== undefined) {
    return {
      factorId: factor.id,
      proof: { recoveryHash: await recoveryCodeHash(jwtSecret, caller.sub, body.recoveryCode) },
    };
  }
  const sealed = { sealed: factor.sealed, keyId: factor.key_id };
  // A token signed with this JWT_SECRET carries a secret sealed under a key derived from it.
  return { factorId: factor.id, proof: { matchedStep: await matchedStepOf(sealed, body.code ?? "", jwtSecret) } };
}

/** The answer to an attempt the database refused: 400 `invalid_code`, 429 while the factor is locked, 404. */
export function refusedAttempt(attempt: RefusedAttempt, field: "code" | "recoveryCode" = "code"): HttpError {
  switch (attempt.kind) {
    case "wrong":
      return new BadRequestError(invalidFactorCode, [{ field, message: invalidFactorCode }], { code: "invalid_code" });
    case "locked":
      return new TooManyRequestsError(
        "Too many wrong codes: the second factor refuses every code for a while",
        attempt.retryAfter,
      );
    case "gone":
      return new NotFoundError("factor_not_found", noFactor);
  }
}
