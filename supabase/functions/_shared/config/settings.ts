/**
 * Reading one setting from the environment: a whole number in its range, a
 * boolean or a header name, each refused with a message that names it.
 */
export type Env = { get(name: string): string | undefined };

/** Thrown for a missing or unusable setting; the message says which and why. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

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

/** The header name `name` names, lower-cased, or undefined when unset; throws `ConfigError` otherwise. */
export function headerNameSetting(env: Env, name: string): string | undefined {
  const raw = env.get(name);
  if (raw === undefined || raw === "") return undefined;
  if (!headerNamePattern.test(raw)) throw new ConfigError(`${name} must be a header name, got "${raw}"`);
  return raw.toLowerCase();
}
