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
  /** The mail provider, or undefined when none is configured (the local stack only prints mails then). */
  mail: MailProvider | undefined;
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
  /**
   * `TRUST_PROXY`: true when proxies that append to `x-forwarded-for` stand in
   * front; the client's address is then the entry the nearest trusted proxy appended.
   */
  trustProxy: boolean;
  /** `TRUSTED_PROXY_HOPS`: how many trusted proxies append to `x-forwarded-for`, counted from the right. */
  trustedProxyHops: number;
  /** `RESET_MAIL_MIN_INTERVAL_SECONDS`: least time between two reset mails to one account. */
  resetMailMinIntervalSeconds: number;
  /** `RESET_MAILS_PER_HOUR`: reset mails to one account per hour. */
  resetMailsPerHour: number;
  /** `BODY_TIMEOUT_MS`: how long a request body may take to arrive after its headers. */
  bodyTimeoutMs: number;
}

export const minJwtSecretBytes = 32;

/** `BODY_TIMEOUT_MS`'s default: how long a request body may take to arrive after its headers. */
export const defaultBodyTimeoutMs = 10_000;

type Env = { get(name: string): string | undefined };

function integerSetting(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env.get(name);
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
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

function booleanSetting(env: Env, name: string, fallback: boolean): boolean {
  const raw = env.get(name);
  if (raw === undefined || raw === "") return fallback;
  if (raw === "true" || raw === "1") return true;
  if (raw === "false" || raw === "0") return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function limitsFrom(env: Env): SecurityLimits {
  const day = 86_400;
  const count = (name: string, fallback: number) => integerSetting(env, name, fallback, 1, 1_000_000);
  const seconds = (name: string, fallback: number) => integerSetting(env, name, fallback, 1, day);
  return {
    loginMaxFailures: count("LOGIN_MAX_FAILURES_PER_EMAIL_AND_ADDRESS", 5),
    loginFailureWindowSeconds: seconds("LOGIN_FAILURE_WINDOW_SECONDS", 900),
    loginMaxAttemptsPerAddress: count("LOGIN_MAX_ATTEMPTS_PER_ADDRESS", 30),
    loginAddressWindowSeconds: seconds("LOGIN_ADDRESS_WINDOW_SECONDS", 300),
    signupMaxPerAddress: count("SIGNUP_MAX_PER_ADDRESS", 30),
    signupAddressWindowSeconds: seconds("SIGNUP_ADDRESS_WINDOW_SECONDS", 300),
    resetCodeMaxAttemptsPerAddress: count("RESET_CODE_MAX_ATTEMPTS_PER_ADDRESS", 30),
    resetCodeAddressWindowSeconds: seconds("RESET_CODE_ADDRESS_WINDOW_SECONDS", 300),
    resetCodeMaxWrongPerAccount: count("RESET_CODE_MAX_WRONG_PER_ACCOUNT", 20),
    resetCodeAccountWindowSeconds: seconds("RESET_CODE_ACCOUNT_WINDOW_SECONDS", day),
    trustProxy: booleanSetting(env, "TRUST_PROXY", false),
    trustedProxyHops: integerSetting(env, "TRUSTED_PROXY_HOPS", 1, 1, 10),
    resetMailMinIntervalSeconds: integerSetting(env, "RESET_MAIL_MIN_INTERVAL_SECONDS", 60, 0, day),
    resetMailsPerHour: count("RESET_MAILS_PER_HOUR", 5),
    bodyTimeoutMs: integerSetting(env, "BODY_TIMEOUT_MS", defaultBodyTimeoutMs, 100, 600_000),
  };
}

/** Reads and validates every setting; throws `ConfigError` on the first bad one. */
export function loadConfig(env: Env): Config {
  const databaseUrl = env.get("DATABASE_URL") || env.get("SUPABASE_DB_URL");
  if (!databaseUrl) throw new ConfigError("Neither DATABASE_URL nor SUPABASE_DB_URL is set");
  return {
    jwtSecret: jwtSecretFrom(env),
    apiKeys: apiKeysFrom(env),
    databaseUrl,
    dbPoolMax: integerSetting(env, "DB_POOL_MAX", 5, 1, 100),
    bcryptCost: integerSetting(env, "BCRYPT_COST", 10, 4, 15),
    statementTimeoutMs: integerSetting(env, "DB_STATEMENT_TIMEOUT_MS", 5_000, 100, 600_000),
    limits: limitsFrom(env),
    mail: mailProviderFrom(env),
  };
}

let cached: Config | undefined;

/** The validated configuration of this isolate, read on first use. */
export function getConfig(): Config {
  cached ??= loadConfig(Deno.env);
  return cached;
}
