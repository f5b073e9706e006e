/**
 * How a password attempt is refused, alike wherever a password is proven
 * (login, verify-email with the password, a re-entered password): the same
 * messages, and the failure recorded after the answer.
 *
 * @example
 * ```ts
 * if (!match) refuseLogin(new UnauthorizedError("invalid_credentials", invalidCredentials), failure);
 * ```
 */
import { withServiceTransaction } from "../db/transactions.ts";
import { afterResponse } from "../http/after-response.ts";
import { recordLoginFailure } from "../queries/accounts.ts";

/** One message for an unknown email and a wrong password, so neither is revealed. */
export const invalidCredentials = "Invalid email or password";

/** The 429 message: it does not say which limit was hit, so it tells nothing about the email. */
export const tooManyAttempts = "Too many login attempts; try again later";

/**
 * Refuses a password attempt with `error`, and records the failure on a known
 * account's security log after the answer: a write for a known email and none
 * for an unknown one would otherwise tell them apart by the answer's timing.
 */
export function refuseLogin(error: Error, failure: Parameters<typeof recordLoginFailure>[0]): never {
  afterResponse("login failure record", () => withServiceTransaction(recordLoginFailure(failure)));
  throw error;
}
