/**
 * Every integer setting of the functions and its range, and reading one by
 * its name; docs/configuration.md lists them, and a test holds the two alike.
 */
import { defaultRefreshGraceSeconds } from "../contract/refresh-budget.ts";
import { type Env, integerSetting, type IntegerSettingSpec, sqlIntegerMax } from "./settings.ts";

/** `BODY_TIMEOUT_MS`'s default: how long a request body may take to arrive after its headers. */
export const defaultBodyTimeoutMs = 10_000;

const day = 86_400;
const mebibyte = 1_048_576;
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
  ANONYMOUS_TTL_DAYS: { fallback: 30, min: 1, max: 3_650, sinks: ["sql"] },
  // 0: a reset removes only the identities that joined while the address was unproven.
  RESET_REVOKES_RECENT_DAYS: {
    fallback: 7,
    min: 0,
    max: 3_650,
    sinks: ["sql"],
  },
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
  ANONYMOUS_MAX_PER_ADDRESS: count(30),
  ANONYMOUS_ADDRESS_WINDOW_SECONDS: rateWindow(3600),
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
  // Below the platform's wall clock (150 s on hosted Supabase's free plan), so the server, not the platform, ends it.
  STREAM_MAX_SECONDS: { fallback: 120, min: 1, max: 3_600, sinks: ["timer"] },
  // At most 15 s: proxies close a connection idle for longer than that, and a session that ends must end its streams.
  STREAM_KEEPALIVE_SECONDS: { fallback: 15, min: 1, max: 15, sinks: ["timer"] },
  STREAM_POLL_MS: { fallback: 2_000, min: 50, max: 60_000, sinks: ["timer"] },
  // The checks of the reservation: the functions refuse a declared size first, Postgres (app.settings) holds both.
  ATTACHMENT_MAX_BYTES: { fallback: 10 * mebibyte, min: 1, max: sqlIntegerMax, sinks: ["sql", "memory"] },
  ATTACHMENT_QUOTA_BYTES: { fallback: 100 * mebibyte, min: 1, max: sqlIntegerMax, sinks: ["sql", "memory"] },
  // A signed download URL names one file to whoever holds it: minutes at most.
  ATTACHMENT_URL_SECONDS: { fallback: 300, min: 1, max: 600, sinks: ["memory"] },
  // A few devices and tabs each; past it an account's next stream is 429, so one cannot hold every connection.
  STREAM_MAX_PER_USER: { fallback: 10, min: 1, max: 1_000, sinks: ["memory"] },
} as const satisfies Record<string, IntegerSettingSpec>;

export type IntegerSettingName = keyof typeof integerSettings;

/**
 * The integer settings Postgres enforces itself, from its row of `app.settings`, so they hold on every route, the
 * Data API included. The functions never read them: the local stack writes them at every start and `npm run db:push`
 * when given (docs/configuration.md, "Settings the database enforces"). Each range is its column's check.
 */
export const databaseIntegerSettings = {
  // app.settings.anonymous_note_limit: the notes an anonymous account may own before it must sign up.
  ANONYMOUS_NOTE_LIMIT: { fallback: 100, min: 0, max: 1_000_000, sinks: ["sql"] },
} as const satisfies Record<string, IntegerSettingSpec>;

/** The setting `name` within its range of `integerSettings`, or its default when unset. */
export function integerSettingOf(env: Env, name: IntegerSettingName): number {
  return integerSetting(env, name, integerSettings[name]);
}
