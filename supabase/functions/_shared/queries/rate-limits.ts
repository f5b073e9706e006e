/**
 * SQL of the rate limits (`app.rate_limits`, counted by the migrations'
 * functions): fixed windows per client address, per (email, address) for
 * failed logins, and per account for wrong reset codes. A refused attempt is
 * not counted. An undefined address (none trustworthy) is not limited.
 *
 * @example
 * ```ts
 * const retryAfter = await withServiceTransaction(reserveLoginAttempt({ email, address, limits }));
 * ```
 */
import type { SecurityLimits } from "../config/mod.ts";
import type { Query, Statement } from "../db/transactions.ts";
import { TooManyRequestsError } from "../http/errors.ts";
import { pgErrorCode } from "../db/errors.ts";

/** What a genuine, unexpired device token claims (`auth/device-tokens.ts` reads it); the database decides whether it still holds. */
export interface TrustedDevice {
  userId: string;
  generation: number;
  /** Names this token's own count of failures; holds no secret, so the count can be stored under it. */
  key: string;
}

/**
 * Counts one login attempt against the account, the address and the (email,
 * address) pair and reads how many seconds until all allow it, or 0 when it
 * may go on. `device`, what a genuine device token claims, lets the login
 * through the account's cap when it is this email's under the account's
 * current device generation; the device's own count of failures stands in for
 * the account's then. Run it in a transaction of its own, so the attempt
 * commits before bcrypt runs.
 */
export function reserveLoginAttempt(
  input: {
    email: string;
    address: string | undefined;
    userAgent: string | undefined;
    limits: SecurityLimits;
    device?: TrustedDevice;
  },
): Query<{ retry_after: number }, number> {
  const { email, address, limits, device } = input;
  return {
    text: "select app.take_login_attempt($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) as retry_after",
    values: [
      email,
      address ?? null,
      limits.loginFailureWindowSeconds,
      limits.loginMaxFailures,
      limits.loginAddressWindowSeconds,
      limits.loginMaxAttemptsPerAddress,
      limits.loginAccountWindowSeconds,
      limits.loginMaxFailuresPerAccount,
      device?.userId ?? null,
      device?.generation ?? null,
      device?.key ?? null,
      limits.loginDeviceWindowSeconds,
      limits.loginMaxFailuresPerDevice,
      input.userAgent ?? null,
    ],
    read: ([row]) => row.retry_after,
  };
}

/**
 * Counts a password re-entered in the session `sessionId` (to change it or
 * delete the account) against the session's own limit, never the account's,
 * and reads how many seconds until it allows one, or 0.
 */
export function reservePasswordReentry(
  sessionId: string,
  limits: SecurityLimits,
): Query<{ retry_after: number }, number> {
  return {
    text: "select app.take_password_reentry($1, $2, $3) as retry_after",
    values: [sessionId, limits.reentrySessionWindowSeconds, limits.reentryMaxPerSession],
    read: ([row]) => row.retry_after,
  };
}

/** The per-address limits a statement can be guarded by. */
export type AddressLimit =
  | "signup-address"
  | "anonymous-address"
  | "reset-address"
  | "reset-request-address"
  | "refresh-address"
  | "verify-address";

function windowOf(limit: AddressLimit, limits: SecurityLimits): { seconds: number; max: number } {
  switch (limit) {
    case "signup-address":
      return { seconds: limits.signupAddressWindowSeconds, max: limits.signupMaxPerAddress };
    case "anonymous-address":
      return { seconds: limits.anonymousAddressWindowSeconds, max: limits.anonymousMaxPerAddress };
    case "reset-address":
      return { seconds: limits.resetCodeAddressWindowSeconds, max: limits.resetCodeMaxAttemptsPerAddress };
    case "reset-request-address":
      return { seconds: limits.resetRequestAddressWindowSeconds, max: limits.resetRequestMaxPerAddress };
    case "refresh-address":
      return { seconds: limits.refreshAddressWindowSeconds, max: limits.refreshMaxPerAddress };
    case "verify-address":
      return { seconds: limits.verifyAddressWindowSeconds, max: limits.verifyMaxPerAddress };
  }
}

/**
 * A statement that counts one hit of the address's limit, or fails the
 * transaction with SQLSTATE PT429 when the limit is reached (nothing counted).
 * Put it before the statements it guards; `asTooManyRequests` turns the failure into a 429.
 */
export function requireAddressLimit(
  limit: AddressLimit,
  address: string | undefined,
  limits: SecurityLimits,
): Statement {
  const { seconds, max } = windowOf(limit, limits);
  return { text: "select app.require_rate_limit($1, $2, $3, $4)", values: [limit, address ?? null, seconds, max] };
}

/** Rethrows a PT429 from `requireAddressLimit` as a 429 with its `Retry-After`, and anything else as it is. */
export function asTooManyRequests(message: string): (error: unknown) => never {
  return (error) => {
    if (pgErrorCode(error) === "PT429") {
      const seconds = Number((error as { detail?: unknown }).detail);
      throw new TooManyRequestsError(message, Number.isInteger(seconds) && seconds > 0 ? seconds : 1);
    }
    throw error;
  };
}
