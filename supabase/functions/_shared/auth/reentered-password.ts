/**
 * A password re-entered by a signed-in user to change it, delete the account
 * or add a second factor (behind the full caller check: a session that has not
 * made its second step cannot try): counted against the session's own small limit
 * (`REENTRY_MAX_PER_SESSION`), committed before the hash is checked, so a
 * stolen access token gets a handful of guesses, while the account's cap of
 * failed logins, which anyone can fill by guessing, never refuses the
 * signed-in owner.
 *
 * @example
 * ```ts
 * const expectedHash = await checkReenteredPassword(caller, body.password, address);
 * ```
 */
import { tooManyAttempts } from "./login-refusals.ts";
import type { Caller } from "./caller.ts";
import { getConfig } from "../config/mod.ts";
import { withFullCaller } from "../db/caller-transactions.ts";
import { BadRequestError, TooManyRequestsError, UnauthorizedError } from "../http/errors.ts";
import { verifyPassword } from "./passwords.ts";
import { passwordReentry, recordLoginFailure } from "../queries/accounts.ts";

/**
 * The caller's password hash when `password` matches it; the statement that
 * changes or deletes the account acts only while the hash is still this one.
 * Throws 429 past the session's limit and 401 `invalid_credentials` for a wrong
 * password.
 */
export async function checkReenteredPassword(
  caller: Caller,
  password: string,
  client: {
    address: string | undefined;
    userAgent: string | undefined;
    via:
      | "change_password"
      | "delete_account"
      | "second_factor_enroll"
      | "identity_link"
      | "reauthenticate";
  },
): Promise<string> {
  const { bcryptCost, limits } = getConfig();
  const { address, userAgent, via } = client;
  const attempt = await withFullCaller(
    caller,
    passwordReentry({ email: caller.email, sessionId: caller.session_id, limits }),
  );
  if (attempt.retryAfter > 0) throw new TooManyRequestsError(tooManyAttempts, attempt.retryAfter);
  if (!attempt.passwordHash || !await verifyPassword(password, attempt.passwordHash, bcryptCost)) {
    // On the account's security log as a failed login, made through this request.
    await withFullCaller(caller, recordLoginFailure({ email: caller.email, address, userAgent, details: { via } }));
    throw wrongPassword();
  }
  return attempt.passwordHash;
}

/** The 401 of a wrong password re-entered, or one changed since it was checked. */
export function wrongPassword(): UnauthorizedError {
  return new UnauthorizedError("invalid_credentials", "Password is incorrect");
}

/**
 * The 400 of a password left out by a session that may not leave it out (`unless` says which may): as for any
 * required field, so a client written before provider sign-in sees what it always saw.
 */
export function passwordRequired(
  field: string,
  unless = "only a proof given with POST /auth/reauthenticate within the last 5 minutes stands in for it",
): BadRequestError {
  const message = `${field} is required`;
  return new BadRequestError(`${message}: ${unless}`, [{ field, message }]);
}
