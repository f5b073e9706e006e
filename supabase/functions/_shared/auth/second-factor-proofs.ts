/**
 * What a request to the second factor proves, worked out in the function
 * before its one statement: the time step the code of the authenticator
 * matched (checked against the factor's secret, which the caller's access
 * token carries sealed under `MFA_SECRET_KEY`, or which is read for a factor
 * sealed before that key), or the keyed hash of a recovery code. And the answer
 * to an attempt the database refused.
 *
 * @example
 * ```ts
 * const proof = await proofOf(caller, { code: "123456" }, getConfig());
 * if (step.kind !== "accepted") throw refusedAttempt(step);
 * ```
 */
import type { Caller } from "./caller.ts";
import {
  BadRequestError,
  ForbiddenError,
  type HttpError,
  NotFoundError,
  TooManyRequestsError,
} from "../http/errors.ts";
import { withLiveCaller } from "../db/caller-transactions.ts";
import { type FactorProof, type RefusedAttempt, sealedFactorSecret } from "../queries/second-factors.ts";
import type { SealedSecret } from "../queries/sessions.ts";
import { recoveryCodeHash } from "./recovery-codes.ts";
import { type SealingSecrets, unsealSecret } from "./sealed-secrets.ts";
import { matchedStep } from "./totp.ts";

export const invalidFactorCode = "Invalid or expired code";
export const noFactor = "The account has no such second factor";

/**
 * The time step `code` matched for the secret sealed in `sealed`; undefined for none. A secret this server cannot
 * open (sealed under another `MFA_SECRET_KEY`) is a server error, never a wrong code: it must not lock its owner out.
 */
export async function matchedStepOf(
  sealed: SealedSecret,
  code: string,
  secrets: SealingSecrets,
): Promise<number | undefined> {
  const secret = await unsealSecret(secrets, sealed);
  if (secret === undefined) {
    throw new Error(
      `a second-factor secret sealed under key ${sealed.keyId} does not open: was its key changed?`,
    );
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
  secrets: SealingSecrets,
): Promise<{ factorId: string; proof: FactorProof }> {
  const factor = caller.second_factor;
  if (!factor) throw new NotFoundError("factor_not_found", noFactor);
  if (body.recoveryCode !== undefined) {
    return {
      factorId: factor.id,
      proof: {
        recoveryHash: await recoveryCodeHash(
          secrets.jwtSecret,
          caller.sub,
          body.recoveryCode,
        ),
      },
    };
  }
  // A factor sealed before MFA_SECRET_KEY is never in a token: its secret is read, one round trip more.
  const sealed = factor.sealed && factor.key_id
    ? { sealed: factor.sealed, keyId: factor.key_id }
    : await withLiveCaller(caller, sealedFactorSecret(caller.sub, factor.id));
  if (!sealed) throw new NotFoundError("factor_not_found", noFactor);
  return {
    factorId: factor.id,
    proof: {
      matchedStep: await matchedStepOf(sealed, body.code ?? "", secrets),
    },
  };
}

/**
 * The answer to an attempt the database refused: 400 `invalid_code`, 429 while the factor is locked, 403
 * `second_factor_locked` once it is locked until a password reset, 404.
 */
export function refusedAttempt(
  attempt: RefusedAttempt,
  field: "code" | "recoveryCode" = "code",
): HttpError {
  switch (attempt.kind) {
    case "locked_out":
      return new ForbiddenError(
        "second_factor_locked",
        "Too many wrong codes in a row: the second factor is locked until the password is reset",
      );
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
