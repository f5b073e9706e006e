/**
 * Server configuration, read once from the environment and validated, so a
 * wrong secret stops the function at its first request with a clear message
 * rather than signing weak tokens.
 *
 * @example
 * ```ts
 * const { databaseUrl } = getConfig();
 * ```
 */
import { defaultRefreshGraceSeconds } from "../auth/refresh-budget.ts";

/** Thrown for a missing or unusable setting; the message says which and why. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

export interface Config {
  /** HS256 key for access tokens. */
  jwtSecret: Uint8Array;
  /** Every value the `apikey` header may carry on auth endpoints. */
  apiKeys: ReadonlySet<string>;
  /** `DATABASE_URL` wins over `SUPABASE_DB_URL`, so operators can point at the pooler. */
  databaseUrl: string;
  /** Connections in this isolate's pool. */
  dbPoolMax: number;
  /** bcrypt cost for new password hashes. */
  bcryptCost: number;
  /** Upper bound on any single statement. */
  statementTimeoutMs: number;
  /** Brute-force limits of login and of reset mails; see `SecurityLimits`. */
  limits: SecurityLimits;
  /** How long sessions last and how refresh tokens rotate; see `SessionSettings`. */
  sessions: SessionSettings;
  /** The mail provider, or undefined when none is configured (the local stack only prints mails then). */
  mail: MailProvider | undefined;
  /**
   * What `/mail-dispatch` accepts as `Authorization: Bearer <secret>`: `MAIL_DISPATCH_SECRET` and the
   * platform's `SUPABASE_SERVICE_ROLE_KEY`. Empty: every call is refused.
   */
  mailDispatchSecrets: ReadonlySet<string>;
  /** `AUDIT_RETENTION_DAYS`: how long security events are kept before the mail drain prunes them. */
  auditRetentionDays: number;
  /**
   * `NOTES_TOMBSTONE_DAYS`: how long deleted notes stay in the changes feed;
   * a changes cursor that needs an older deletion answers 410.
   */
  tombstoneDays: number;
}

/** Resend's HTTPS API, the provider Supabase documents for sending mail from Edge Functions. */
export interface MailProvider {
  /** `RESEND_API_KEY`. */
  apiKey: string;
  /** `MAIL_FROM`: the sender, an address of a domain verified with Resend, e.g. `Notes <no-reply@example.com>`. */
  from: string;
  /** `RESEND_API_URL`: the API's base URL; tests point it at a local server. */
  apiUrl: string;
}

export const defaultResendApiUrl = "https://api.resend.com";

function mailProviderFrom(env: Env): MailProvider | undefined {
  const apiKey = env.get("RESEND_API_KEY");
  if (!apiKey) return undefined;
  const from = env.get("MAIL_FROM");
  if (!from) throw new ConfigError("RESEND_API_KEY is set but MAIL_FROM is not: mails need a sender address");
  const apiUrl = env.get("RESEND_API_URL") || defaultResendApiUrl;
  if (!URL.canParse(apiUrl) || !/^https?:$/.test(new URL(apiUrl).protocol)) {
    throw new ConfigError(`RESEND_API_URL must be an http(s) URL, got "${apiUrl}"`);
  }
  return { apiKey, from, apiUrl: apiUrl.replace(/\/+$/, "") };
}

/**
 * Limits against guessing and flooding, kept in Postgres (edge isolates share
 * no memory). Each has an environment setting; the defaults are production's.
 * Per-address limits need a trustworthy client address (see `client-address.ts`).
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

/** Session lifetimes, each a positive whole number of seconds. */
export interface SessionSettings {
  /** `SESSION_IDLE_TIMEOUT_SECONDS`: a session not refreshed for this long ends (default 7 days). */
  idleTimeoutSeconds: number;
  /** `SESSION_MAX_LIFETIME_SECONDS`: a session ends this long after sign-in, refreshed or not (default 30 days). */
  maxLifetimeSeconds: number;
  /**
   * `SESSION_REFRESH_GRACE_SECONDS`: how long a replaced refresh token still refreshes (to the current one),
   * so two tabs or a retry that spend the same token converge instead of signing the user out (default
   * `defaultRefreshGraceSeconds`, which covers the typed client's whole refresh).
   */
  refreshGraceSeconds: number;
}

export const minJwtSecretBytes = 32;

/** `BODY_TIMEOUT_MS`'s default: how long a request body may take to arrive after its headers. */
export const defaultBodyTimeoutMs = 10_000;

type Env = { get(name: string): string | undefined };

/**
 * The largest Postgres `integer` (int4). Every count, window and duration the functions pass to SQL is an
 * `integer` parameter of a function of the migrations; a larger value fails that call (SQLSTATE 22003).
 */
export const sqlIntegerMax = 2_147_483_647;
/** The longest delay a JavaScript timer keeps (2^31-1 ms): `setTimeout` fires a longer one at once. */
export const timerDelayMaxMs = 2_147_483_647;

/** Where an integer setting's value goes, which bounds how large it may be. */
export type SettingSink =
  /** An `integer` parameter of a SQL function, or a Postgres setting of that type: at most `sqlIntegerMax`. */
  | "sql"
  /** A timer's delay in milliseconds: at most `timerDelayMaxMs`. */
  | "timer"
  /** A size or count the functions keep in memory. */
  | "memory";

/** An integer setting's default and the range it accepts. */
export interface IntegerSettingSpec {
  fallback: number;
  min: number;
  max: number;
  /** Every place its value goes; `max` fits each of them. */
  sinks: readonly SettingSink[];
}

const day = 86_400;
/** A rate limit's count: hits, failures or mails in its window, compared in SQL. */
const count = (fallback: number): IntegerSettingSpec => ({ fallback, min: 1, max: 1_000_000, sinks: ["sql"] });
/** A rate limit's window in seconds, a day at most, passed to SQL. */
const rateWindow = (fallback: number): IntegerSettingSpec => ({ fallback, min: 1, max: day, sinks: ["sql"] });
/** A session's timeout in seconds: any a SQL `integer` holds (68 years). */
const sessionSeconds = (fallback: number): IntegerSettingSpec => ({
  fallback,
  min: 1,
  max: sqlIntegerMax,
  sinks: ["sql"],
});

/**
 * Every integer setting of the functions, in one place: its default and the range it accepts. Each maximum is
 * what the setting is for, and never more than what its value reaches can take (`sinks`), so a value accepted at
 * start cannot fail a request later. `integerSettingOf` reads them; docs/configuration.md lists the ranges.
 */
export const integerSettings = {
  DB_POOL_MAX: { fallback: 5, min: 1, max: 100, sinks: ["memory"] },
  BCRYPT_COST: { fallback: 10, min: 4, max: 15, sinks: ["memory"] },
  // Postgres's `statement_timeout`, and the pool's query timeout a second past it.
  DB_STATEMENT_TIMEOUT_MS: { fallback: 5_000, min: 100, max: 600_000, sinks: ["sql", "timer"] },
  // At least a day: app.prune_security_events refuses anything younger.
  AUDIT_RETENTION_DAYS: { fallback: 90, min: 1, max: 36_500, sinks: ["sql"] },
  NOTES_TOMBSTONE_DAYS: { fallback: 30, min: 1, max: 3_650, sinks: ["sql"] },
  SESSION_IDLE_TIMEOUT_SECONDS: sessionSeconds(7 * day),
  SESSION_MAX_LIFETIME_SECONDS: sessionSeconds(30 * day),
  SESSION_REFRESH_GRACE_SECONDS: sessionSeconds(defaultRefreshGraceSeconds),
  LOGIN_MAX_FAILURES_PER_EMAIL_AND_ADDRESS: count(5),
  LOGIN_FAILURE_WINDOW_SECONDS: rateWindow(900),
  LOGIN_MAX_ATTEMPTS_PER_ADDRESS: count(30),
  LOGIN_ADDRESS_WINDOW_SECONDS: rateWindow(300),
  LOGIN_MAX_FAILURES_PER_ACCOUNT: count(20),
  LOGIN_ACCOUNT_WINDOW_SECONDS: rateWindow(3600),
  LOGIN_MAX_FAILURES_PER_DEVICE: count(10),
  LOGIN_DEVICE_WINDOW_SECONDS: rateWindow(3600),
  REENTRY_MAX_PER_SESSION: count(5),
  REENTRY_SESSION_WINDOW_SECONDS: rateWindow(900),
  HASH_CONCURRENCY: { fallback: 2, min: 1, max: 64, sinks: ["memory"] },
  HASH_QUEUE_MAX: { fallback: 16, min: 0, max: 10_000, sinks: ["memory"] },
  SIGNUP_MAX_PER_ADDRESS: count(30),
  SIGNUP_ADDRESS_WINDOW_SECONDS: rateWindow(300),
  RESET_CODE_MAX_ATTEMPTS_PER_ADDRESS: count(30),
  RESET_CODE_ADDRESS_WINDOW_SECONDS: rateWindow(300),
  RESET_CODE_MAX_WRONG_PER_ACCOUNT: count(20),
  RESET_CODE_ACCOUNT_WINDOW_SECONDS: rateWindow(day),
  VERIFY_MAX_PER_ADDRESS: count(30),
  VERIFY_ADDRESS_WINDOW_SECONDS: rateWindow(300),
  VERIFICATION_MAIL_MIN_INTERVAL_SECONDS: { ...rateWindow(60), min: 0 },
  VERIFICATION_MAILS_PER_DAY: count(5),
  REFRESH_MAX_PER_ADDRESS: count(300),
  REFRESH_ADDRESS_WINDOW_SECONDS: rateWindow(300),
  TRUSTED_PROXY_HOPS: { fallback: 1, min: 1, max: 10, sinks: ["memory"] },
  RESET_REQUEST_MAX_PER_ADDRESS: count(30),
  RESET_REQUEST_ADDRESS_WINDOW_SECONDS: rateWindow(300),
  RESET_MAIL_MIN_INTERVAL_SECONDS: { ...rateWindow(60), min: 0 },
  RESET_MAILS_PER_HOUR: count(5),
  BODY_TIMEOUT_MS: { fallback: defaultBodyTimeoutMs, min: 100, max: 600_000, sinks: ["timer"] },
} as const satisfies Record<string, IntegerSettingSpec>;

export type IntegerSettingName = keyof typeof integerSettings;

/** The integer setting `name` within `min`..`max`, or `fallback` when unset; throws `ConfigError` otherwise. */
export function integerSetting(env: Env, name: string, range: Omit<IntegerSettingSpec, "sinks">): number {
  const { fallback, min, max } = range;
  const raw = env.get(name);
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

/** The setting `name` within its range of `integerSettings`, or its default when unset. */
function integerSettingOf(env: Env, name: IntegerSettingName): number {
  return integerSetting(env, name, integerSettings[name]);
}

function jwtSecretFrom(env: Env): Uint8Array {
  const secret = env.get("JWT_SECRET");
  if (!secret) throw new ConfigError("JWT_SECRET is not set: access tokens cannot be signed");
  if (secret !== secret.trim()) {
    throw new ConfigError("JWT_SECRET has leading or trailing whitespace; set it without");
  }
  const bytes = new TextEncoder().encode(secret);
  if (bytes.length < minJwtSecretBytes) {
    throw new ConfigError(
      `JWT_SECRET is ${bytes.length} bytes; HS256 needs at least ${minJwtSecretBytes}`,
    );
  }
  return bytes;
}

function apiKeysFrom(env: Env): Set<string> {
  const keys = new Set<string>();
  const anonKey = env.get("SUPABASE_ANON_KEY");
  if (anonKey) keys.add(anonKey);
  const publishable = env.get("SUPABASE_PUBLISHABLE_KEYS");
  if (publishable) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(publishable);
    } catch {
      throw new ConfigError("SUPABASE_PUBLISHABLE_KEYS must be a JSON object of keys");
    }
    if (typeof parsed !== "object" || parsed === null) {
      throw new ConfigError("SUPABASE_PUBLISHABLE_KEYS must be a JSON object of keys");
    }
    for (const value of Object.values(parsed)) {
      if (typeof value === "string" && value) keys.add(value);
    }
  }
  if (keys.size === 0) {
    throw new ConfigError("Neither SUPABASE_ANON_KEY nor SUPABASE_PUBLISHABLE_KEYS is set");
  }
  return keys;
}

/** The boolean setting `name` (`true`/`1` or `false`/`0`), or `fallback` when unset; throws `ConfigError` otherwise. */
export function booleanSetting(env: Env, name: string, fallback: boolean): boolean {
  const raw = env.get(name);
  if (raw === undefined || raw === "") return fallback;
  if (raw === "true" || raw === "1") return true;
  if (raw === "false" || raw === "0") return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

// RFC 9110's token: what a header name may be made of.
const headerNamePattern = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function headerNameSetting(env: Env, name: string): string | undefined {
  const raw = env.get(name);
  if (raw === undefined || raw === "") return undefined;
  if (!headerNamePattern.test(raw)) throw new ConfigError(`${name} must be a header name, got "${raw}"`);
  return raw.toLowerCase();
}

function limitsFrom(env: Env): SecurityLimits {
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

function sessionSettingsFrom(env: Env): SessionSettings {
  return {
    idleTimeoutSeconds: integerSettingOf(env, "SESSION_IDLE_TIMEOUT_SECONDS"),
    maxLifetimeSeconds: integerSettingOf(env, "SESSION_MAX_LIFETIME_SECONDS"),
    refreshGraceSeconds: integerSettingOf(env, "SESSION_REFRESH_GRACE_SECONDS"),
  };
}

function mailDispatchSecretsFrom(env: Env, apiKeys: ReadonlySet<string>): Set<string> {
  const secrets = new Set<string>();
  const own = env.get("MAIL_DISPATCH_SECRET");
  if (own) {
    if (new TextEncoder().encode(own).length < minJwtSecretBytes) {
      throw new ConfigError(`MAIL_DISPATCH_SECRET must be at least ${minJwtSecretBytes} bytes`);
    }
    secrets.add(own);
  }
  const serviceRoleKey = env.get("SUPABASE_SERVICE_ROLE_KEY");
  if (serviceRoleKey) secrets.add(serviceRoleKey);
  // A public key would let anyone drain the outbox and call the mail provider at will.
  for (const key of apiKeys) {
    if (secrets.has(key)) throw new ConfigError("MAIL_DISPATCH_SECRET must not be a public (anon or publishable) key");
  }
  return secrets;
}

/** Reads and validates every setting; throws `ConfigError` on the first bad one. */
export function loadConfig(env: Env): Config {
  const databaseUrl = env.get("DATABASE_URL") || env.get("SUPABASE_DB_URL");
  if (!databaseUrl) throw new ConfigError("Neither DATABASE_URL nor SUPABASE_DB_URL is set");
  const apiKeys = apiKeysFrom(env);
  return {
    jwtSecret: jwtSecretFrom(env),
    apiKeys,
    databaseUrl,
    dbPoolMax: integerSettingOf(env, "DB_POOL_MAX"),
    bcryptCost: integerSettingOf(env, "BCRYPT_COST"),
    statementTimeoutMs: integerSettingOf(env, "DB_STATEMENT_TIMEOUT_MS"),
    limits: limitsFrom(env),
    sessions: sessionSettingsFrom(env),
    mail: mailProviderFrom(env),
    mailDispatchSecrets: mailDispatchSecretsFrom(env, apiKeys),
    auditRetentionDays: integerSettingOf(env, "AUDIT_RETENTION_DAYS"),
    tombstoneDays: integerSettingOf(env, "NOTES_TOMBSTONE_DAYS"),
  };
}

let cached: Config | undefined;

/** The validated configuration of this isolate, read on first use. */
export function getConfig(): Config {
  cached ??= loadConfig(Deno.env);
  return cached;
}
