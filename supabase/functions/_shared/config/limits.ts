/**
 * The limits against guessing and flooding, read from the environment: what
 * each setting means, and reading them all.
 */
import { booleanSetting, type Env, headerNameSetting } from "./settings.ts";
import { type IntegerSettingName, integerSettingOf } from "./integer-settings.ts";

/**
 * Limits against guessing and flooding, kept in Postgres (edge isolates share
 * no memory). Each has an environment setting; the defaults are production's.
 * Per-address limits need a trustworthy client address (see `http/client-address.ts`).
 */
export interface SecurityLimits {
  /** `LOGIN_MAX_FAILURES_PER_EMAIL_AND_ADDRESS`: failed logins of one email from one address before that pair waits. */
  loginMaxFailures: number;
  /** `LOGIN_FAILURE_WINDOW_SECONDS`: how long those failures count and the wait lasts. */
  loginFailureWindowSeconds: number;
  /** `LOGIN_MAX_ATTEMPTS_PER_ADDRESS`: login attempts of one client address in its window. */
  loginMaxAttemptsPerAddress: number;
  /** `LOGIN_ADDRESS_WINDOW_SECONDS`: the per-address window. */
  loginAddressWindowSeconds: number;
  /**
   * `LOGIN_MAX_FAILURES_PER_ACCOUNT`: failed logins of one account from every address in its window; past them
   * the account refuses logins from devices without its device token.
   */
  loginMaxFailuresPerAccount: number;
  /** `LOGIN_ACCOUNT_WINDOW_SECONDS`: that window. */
  loginAccountWindowSeconds: number;
  /** `LOGIN_MAX_FAILURES_PER_DEVICE`: failed logins made with one device token, which passes the account's cap. */
  loginMaxFailuresPerDevice: number;
  /** `LOGIN_DEVICE_WINDOW_SECONDS`: that window. */
  loginDeviceWindowSeconds: number;
  /** `REENTRY_MAX_PER_SESSION`: passwords re-entered (change-password, delete-account) in one session. */
  reentryMaxPerSession: number;
  /** `REENTRY_SESSION_WINDOW_SECONDS`: that window. */
  reentrySessionWindowSeconds: number;
  /** `HASH_CONCURRENCY`: passwords an isolate hashes or checks at once. */
  hashConcurrency: number;
  /** `HASH_QUEUE_MAX`: hashes that may wait for a turn; past them a request is answered 503 at once. */
  hashQueueMax: number;
  /** `SIGNUP_MAX_PER_ADDRESS`: registers from one client address in its window. */
  signupMaxPerAddress: number;
  /** `SIGNUP_ADDRESS_WINDOW_SECONDS`: that window. */
  signupAddressWindowSeconds: number;
  /** `ANONYMOUS_MAX_PER_ADDRESS`: anonymous accounts started from one client address in its window. */
  anonymousMaxPerAddress: number;
  /** `ANONYMOUS_ADDRESS_WINDOW_SECONDS`: that window. */
  anonymousAddressWindowSeconds: number;
  /** `RESET_CODE_MAX_ATTEMPTS_PER_ADDRESS`: create-password calls from one client address in its window. */
  resetCodeMaxAttemptsPerAddress: number;
  /** `RESET_CODE_ADDRESS_WINDOW_SECONDS`: that window. */
  resetCodeAddressWindowSeconds: number;
  /** `RESET_CODE_MAX_WRONG_PER_ACCOUNT`: wrong reset codes for one account, from anywhere, in its window. */
  resetCodeMaxWrongPerAccount: number;
  /** `RESET_CODE_ACCOUNT_WINDOW_SECONDS`: that window. */
  resetCodeAccountWindowSeconds: number;
  /** `VERIFY_MAX_PER_ADDRESS`: verify-email and resend-verification calls from one client address in its window. */
  verifyMaxPerAddress: number;
  /** `VERIFY_ADDRESS_WINDOW_SECONDS`: that window. */
  verifyAddressWindowSeconds: number;
  /** `VERIFICATION_MAIL_MIN_INTERVAL_SECONDS`: least time between two verification mails to one account. */
  verificationMailMinIntervalSeconds: number;
  /** `VERIFICATION_MAILS_PER_DAY`: verification mails to one account per day. */
  verificationMailsPerDay: number;
  /** `REFRESH_MAX_PER_ADDRESS`: session refreshes from one client address in its window. */
  refreshMaxPerAddress: number;
  /** `REFRESH_ADDRESS_WINDOW_SECONDS`: that window. */
  refreshAddressWindowSeconds: number;
  /**
   * `TRUST_PROXY`: true when proxies that append to `x-forwarded-for` stand in
   * front; the client's address is then the entry the nearest trusted proxy appended.
   */
  trustProxy: boolean;
  /** `TRUSTED_PROXY_HOPS`: how many trusted proxies append to `x-forwarded-for`, counted from the right. */
  trustedProxyHops: number;
  /**
   * `CLIENT_ADDRESS_HEADER`: a header the platform's edge sets to the caller's address, overwriting any the
   * caller sent (`cf-connecting-ip` on hosted Supabase). When set, it alone gives the address.
   */
  clientAddressHeader: string | undefined;
  /** `RESET_REQUEST_MAX_PER_ADDRESS`: request-password-reset calls from one client address in its window. */
  resetRequestMaxPerAddress: number;
  /** `RESET_REQUEST_ADDRESS_WINDOW_SECONDS`: that window. */
  resetRequestAddressWindowSeconds: number;
  /** `RESET_MAIL_MIN_INTERVAL_SECONDS`: least time between two reset mails to one account. */
  resetMailMinIntervalSeconds: number;
  /** `RESET_MAILS_PER_HOUR`: reset mails to one account per hour. */
  resetMailsPerHour: number;
  /** `BODY_TIMEOUT_MS`: how long a request body may take to arrive after its headers. */
  bodyTimeoutMs: number;
}

/** The limits of `env`, each its setting or its default. */
export function limitsFrom(env: Env): SecurityLimits {
  const setting = (name: IntegerSettingName) => integerSettingOf(env, name);
  return {
    loginMaxFailures: setting("LOGIN_MAX_FAILURES_PER_EMAIL_AND_ADDRESS"),
    loginFailureWindowSeconds: setting("LOGIN_FAILURE_WINDOW_SECONDS"),
    loginMaxAttemptsPerAddress: setting("LOGIN_MAX_ATTEMPTS_PER_ADDRESS"),
    loginAddressWindowSeconds: setting("LOGIN_ADDRESS_WINDOW_SECONDS"),
    loginMaxFailuresPerAccount: setting("LOGIN_MAX_FAILURES_PER_ACCOUNT"),
    loginAccountWindowSeconds: setting("LOGIN_ACCOUNT_WINDOW_SECONDS"),
    loginMaxFailuresPerDevice: setting("LOGIN_MAX_FAILURES_PER_DEVICE"),
    loginDeviceWindowSeconds: setting("LOGIN_DEVICE_WINDOW_SECONDS"),
    reentryMaxPerSession: setting("REENTRY_MAX_PER_SESSION"),
    reentrySessionWindowSeconds: setting("REENTRY_SESSION_WINDOW_SECONDS"),
    hashConcurrency: setting("HASH_CONCURRENCY"),
    hashQueueMax: setting("HASH_QUEUE_MAX"),
    signupMaxPerAddress: setting("SIGNUP_MAX_PER_ADDRESS"),
    signupAddressWindowSeconds: setting("SIGNUP_ADDRESS_WINDOW_SECONDS"),
    anonymousMaxPerAddress: setting("ANONYMOUS_MAX_PER_ADDRESS"),
    anonymousAddressWindowSeconds: setting("ANONYMOUS_ADDRESS_WINDOW_SECONDS"),
    resetCodeMaxAttemptsPerAddress: setting("RESET_CODE_MAX_ATTEMPTS_PER_ADDRESS"),
    resetCodeAddressWindowSeconds: setting("RESET_CODE_ADDRESS_WINDOW_SECONDS"),
    resetCodeMaxWrongPerAccount: setting("RESET_CODE_MAX_WRONG_PER_ACCOUNT"),
    resetCodeAccountWindowSeconds: setting("RESET_CODE_ACCOUNT_WINDOW_SECONDS"),
    verifyMaxPerAddress: setting("VERIFY_MAX_PER_ADDRESS"),
    verifyAddressWindowSeconds: setting("VERIFY_ADDRESS_WINDOW_SECONDS"),
    verificationMailMinIntervalSeconds: setting("VERIFICATION_MAIL_MIN_INTERVAL_SECONDS"),
    verificationMailsPerDay: setting("VERIFICATION_MAILS_PER_DAY"),
    refreshMaxPerAddress: setting("REFRESH_MAX_PER_ADDRESS"),
    refreshAddressWindowSeconds: setting("REFRESH_ADDRESS_WINDOW_SECONDS"),
    trustProxy: booleanSetting(env, "TRUST_PROXY", false),
    trustedProxyHops: setting("TRUSTED_PROXY_HOPS"),
    clientAddressHeader: headerNameSetting(env, "CLIENT_ADDRESS_HEADER"),
    resetRequestMaxPerAddress: setting("RESET_REQUEST_MAX_PER_ADDRESS"),
    resetRequestAddressWindowSeconds: setting("RESET_REQUEST_ADDRESS_WINDOW_SECONDS"),
    resetMailMinIntervalSeconds: setting("RESET_MAIL_MIN_INTERVAL_SECONDS"),
    resetMailsPerHour: setting("RESET_MAILS_PER_HOUR"),
    bodyTimeoutMs: setting("BODY_TIMEOUT_MS"),
  };
}
