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
import { booleanSetting, ConfigError, type Env } from "./settings.ts";
import { integerSettingOf } from "./integer-settings.ts";
import { limitsFrom, type SecurityLimits } from "./limits.ts";
import { providerSignInFrom, type ProviderSignInSettings } from "./provider-sign-in.ts";
import { type PasskeySettings, passkeySettingsFrom } from "./passkeys.ts";
import { type AttachmentSettings, attachmentSettingsFrom } from "./attachments.ts";

export {
  booleanSetting,
  ConfigError,
  integerSetting,
  type IntegerSettingSpec,
  type SettingSink,
  sqlIntegerMax,
  timerDelayMaxMs,
} from "./settings.ts";
export {
  databaseIntegerSettings,
  defaultBodyTimeoutMs,
  type IntegerSettingName,
  integerSettings,
} from "./integer-settings.ts";
export type { SecurityLimits } from "./limits.ts";
export {
  callbackProviderOf,
  type IdentityProviderSettings,
  isAllowedRedirect,
  providerCallbackUrl,
  type ProviderSignInSettings,
} from "./provider-sign-in.ts";
export { allowsPasskeyOrigin, type PasskeySettings } from "./passkeys.ts";
export type { AttachmentSettings, ObjectStore } from "./attachments.ts";

export interface Config {
  /** HS256 key for access tokens. */
  jwtSecret: Uint8Array;
  /**
   * `MFA_SECRET_KEY`: the key second-factor secrets are sealed under (`auth/sealed-secrets.ts`), never `JWT_SECRET`,
   * so that `JWT_SECRET` and a user's password together do not open the secret an access token carries.
   */
  mfaSecretKey: Uint8Array;
  /** Every value the `apikey` header may carry on auth endpoints. */
  apiKeys: ReadonlySet<string>;
  /** `DATABASE_URL` wins over `SUPABASE_DB_URL`, so operators can point at the pooler. */
  databaseUrl: string;
  /**
   * `DATABASE_LISTEN_URL`: a session-mode or direct connection on which the isolate listens for note changes,
   * for live updates; unset, streams poll the change counters (a transaction-mode pooler never delivers a notice).
   */
  databaseListenUrl: string | undefined;
  /** How live update streams run; see `StreamSettings`. */
  streams: StreamSettings;
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
  /** `ANONYMOUS_TTL_DAYS`: how long an anonymous account may go unused before the schedule deletes it. */
  anonymousTtlDays: number;
  /** `OTP_SIGN_UP`: a code mailed to an address no account holds creates its account at `/auth/otp/verify`. */
  otpSignUp: boolean;
  /**
   * `RESET_REVOKES_RECENT_DAYS`: a password reset removes the provider identities linked this many days before it
   * (an identity is a way in, as the password the reset replaces), besides those linked while the address was unproven.
   */
  resetRevokesRecentDays: number;
  /** Sign-in with OpenID Connect providers; see `ProviderSignInSettings`. */
  providerSignIn: ProviderSignInSettings;
  /** Attachments: their limits and the object store; see `AttachmentSettings`. */
  attachments: AttachmentSettings;
  /** Passkeys: the relying party and the origins its ceremonies may run on; see `PasskeySettings`. */
  passkeys: PasskeySettings;
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

/** How `GET /notes-stream` runs. */
export interface StreamSettings {
  /** `STREAM_MAX_SECONDS`: the server ends each stream after this long; the client resumes from its last event. */
  maxSeconds: number;
  /** `STREAM_KEEPALIVE_SECONDS`: at least this often a stream sends a comment and rechecks its caller's session. */
  keepAliveSeconds: number;
  /** `STREAM_POLL_MS`: how often the change counters are polled while no notice connection is listening. */
  pollMs: number;
  /** `STREAM_MAX_PER_USER`: streams one account may have open in an isolate at once; past it, 429. */
  maxPerUser: number;
}

export const minJwtSecretBytes = 32;

/** A secret setting of at least `minJwtSecretBytes` bytes, with no surrounding whitespace. */
function secretFrom(
  env: Env,
  name: string,
  unset: string,
  usedFor: string,
): Uint8Array {
  const secret = env.get(name);
  if (!secret) throw new ConfigError(`${name} is not set: ${unset}`);
  if (secret !== secret.trim()) {
    throw new ConfigError(
      `${name} has leading or trailing whitespace; set it without`,
    );
  }
  const bytes = new TextEncoder().encode(secret);
  if (bytes.length < minJwtSecretBytes) {
    throw new ConfigError(
      `${name} is ${bytes.length} bytes; ${usedFor} needs at least ${minJwtSecretBytes}`,
    );
  }
  return bytes;
}

function jwtSecretFrom(env: Env): Uint8Array {
  return secretFrom(
    env,
    "JWT_SECRET",
    "access tokens cannot be signed",
    "HS256",
  );
}

function mfaSecretKeyFrom(env: Env, jwtSecret: Uint8Array): Uint8Array {
  const key = secretFrom(
    env,
    "MFA_SECRET_KEY",
    "second-factor secrets cannot be sealed",
    "sealing them",
  );
  // The point of a key of its own: whoever holds JWT_SECRET must not hold this one too.
  if (
    key.length === jwtSecret.length &&
    key.every((byte, i) => byte === jwtSecret[i])
  ) {
    throw new ConfigError(
      "MFA_SECRET_KEY must not be JWT_SECRET: set a key of its own",
    );
  }
  return key;
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
  const jwtSecret = jwtSecretFrom(env);
  return {
    jwtSecret,
    mfaSecretKey: mfaSecretKeyFrom(env, jwtSecret),
    apiKeys,
    databaseUrl,
    databaseListenUrl: env.get("DATABASE_LISTEN_URL") || undefined,
    streams: {
      maxSeconds: integerSettingOf(env, "STREAM_MAX_SECONDS"),
      keepAliveSeconds: integerSettingOf(env, "STREAM_KEEPALIVE_SECONDS"),
      pollMs: integerSettingOf(env, "STREAM_POLL_MS"),
      maxPerUser: integerSettingOf(env, "STREAM_MAX_PER_USER"),
    },
    dbPoolMax: integerSettingOf(env, "DB_POOL_MAX"),
    bcryptCost: integerSettingOf(env, "BCRYPT_COST"),
    statementTimeoutMs: integerSettingOf(env, "DB_STATEMENT_TIMEOUT_MS"),
    limits: limitsFrom(env),
    sessions: sessionSettingsFrom(env),
    mail: mailProviderFrom(env),
    mailDispatchSecrets: mailDispatchSecretsFrom(env, apiKeys),
    auditRetentionDays: integerSettingOf(env, "AUDIT_RETENTION_DAYS"),
    tombstoneDays: integerSettingOf(env, "NOTES_TOMBSTONE_DAYS"),
    anonymousTtlDays: integerSettingOf(env, "ANONYMOUS_TTL_DAYS"),
    otpSignUp: booleanSetting(env, "OTP_SIGN_UP", false),
    resetRevokesRecentDays: integerSettingOf(env, "RESET_REVOKES_RECENT_DAYS"),
    providerSignIn: providerSignInFrom(env),
    passkeys: passkeySettingsFrom(env),
    attachments: attachmentSettingsFrom(env),
  };
}

let cached: Config | undefined;

/** The validated configuration of this isolate, read on first use. */
export function getConfig(): Config {
  cached ??= loadConfig(Deno.env);
  return cached;
}
