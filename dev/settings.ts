/**
 * The local stack's settings (DESIGN.md, "The local stack's contract"): the
 * environment where given, documented development defaults where not.
 */

import { integerSetting, type IntegerSettingSpec } from "../supabase/functions/_shared/config/mod.ts";
import type { ServerBounds } from "./bounded-server.ts";
import {
  anonymousNoteLimitFrom,
  attachmentLimitsFrom,
  type DatabaseSettings,
  requireEmailVerificationFrom,
} from "./database-settings.ts";
import { databaseIntegerSettings } from "../supabase/functions/_shared/config/mod.ts";

/** The same development secret `supabase start` uses; never for a deployment. */
export const devJwtSecret = "super-secret-jwt-token-with-at-least-32-characters-long";
/** The development `apikey`; clients send it on `/auth/*` requests. */
export const devAnonKey = "local-dev-anon-key-not-for-production";
/** The development key second-factor secrets are sealed under; never for a deployment. */
export const devMfaSecretKey = "local-dev-second-factor-key-not-for-production";

export interface StackSettings {
  port: number;
  /** A PostgreSQL to use; undefined means the embedded PGlite. */
  databaseUrl?: string;
  pgliteDataDir: string;
  jwtSecret: string;
  mfaSecretKey: string;
  anonKey: string;
  /**
   * `SUPABASE_SERVICE_ROLE_KEY`: what the functions present to the stack's Storage endpoints. Unset, a random key of
   * this start's own, which nothing outside the process knows.
   */
  serviceRoleKey: string;
  /** Which settings fell back to a development default, for the start-up warning. */
  defaulted: string[];
  /** `HEADERS_TIMEOUT_MS`: how long a request's headers may take to arrive. */
  headersTimeoutMs: number;
  /** `KEEP_ALIVE_TIMEOUT_MS`: how long an idle keep-alive connection stays open. */
  keepAliveTimeoutMs: number;
  /** `MAX_CONNECTIONS`: open connections served at once; past it new ones are closed. */
  maxConnections: number;
  /** What the database enforces itself, written into it at every start (REQUIRE_EMAIL_VERIFICATION unset: false). */
  database: DatabaseSettings;
  /** `SEND_STALL_TIMEOUT_MS`: how long an answer may make no progress before its connection is closed. */
  sendStallTimeoutMs: number;
}

/**
 * Descriptors kept free of connections: embedded PGlite alone holds one per
 * relation file (about 170 when idle), and a burst of connections is accepted
 * faster than those past the cap are closed, so each of them holds one for a moment.
 */
function reservedDescriptors(limit: number): number {
  return Math.max(512, Math.floor(limit / 4));
}

/**
 * The stack's own timeouts, with their defaults and ranges, as the functions' `integerSettings`. The longest
 * header timeout is short: a longer one lets each slow-header client hold its socket longer.
 */
export const stackIntegerSettings = {
  HEADERS_TIMEOUT_MS: { fallback: 10_000, min: 100, max: 15_000, sinks: ["timer"] },
  KEEP_ALIVE_TIMEOUT_MS: { fallback: 5_000, min: 100, max: 600_000, sinks: ["timer"] },
  // Short too: a longer one lets each client that does not read hold its answer longer.
  SEND_STALL_TIMEOUT_MS: { fallback: 20_000, min: 100, max: 30_000, sinks: ["timer"] },
} as const satisfies Record<string, IntegerSettingSpec>;

/** The process's soft limit on open files (Linux), or undefined where it cannot be read. */
export function openFilesLimit(): number | undefined {
  try {
    const limits = Deno.readTextFileSync("/proc/self/limits");
    const soft = /^Max open files\s+(\d+)/m.exec(limits)?.[1];
    return soft === undefined ? undefined : Number(soft);
  } catch {
    return undefined;
  }
}

/** Reads the stack's settings from the environment. */
export function readStackSettings(env: Deno.Env = Deno.env): StackSettings {
  const defaulted: string[] = [];
  const orDefault = (name: string, fallback: string) => {
    const value = env.get(name);
    if (value !== undefined && value !== "") return value;
    defaulted.push(name);
    return fallback;
  };
  const portText = env.get("PORT") || "54321";
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new Error(`PORT must be a port number, got "${portText}"`);
  }
  // Below the descriptor limit, so a flood of connections is refused instead of exhausting it.
  const descriptors = openFilesLimit();
  const connectionCeiling = descriptors === undefined ? 100_000 : descriptors - reservedDescriptors(descriptors);
  if (connectionCeiling < 1) throw new Error(`the open-files limit (${descriptors}) is too low; raise ulimit -n`);
  // Bounded by this machine, not by a type, so it has no place in `stackIntegerSettings`.
  const maxConnections = integerSetting(env, "MAX_CONNECTIONS", {
    fallback: Math.min(connectionCeiling, 10_000),
    min: 1,
    max: connectionCeiling,
  });
  return {
    port,
    databaseUrl: env.get("DATABASE_URL") || undefined,
    pgliteDataDir: env.get("PGLITE_DATA_DIR") || ".data/pglite",
    jwtSecret: orDefault("JWT_SECRET", devJwtSecret),
    mfaSecretKey: orDefault("MFA_SECRET_KEY", devMfaSecretKey),
    anonKey: orDefault("SUPABASE_ANON_KEY", devAnonKey),
    serviceRoleKey: env.get("SUPABASE_SERVICE_ROLE_KEY") || `local-service-role-${crypto.randomUUID()}`,
    defaulted,
    headersTimeoutMs: integerSetting(env, "HEADERS_TIMEOUT_MS", stackIntegerSettings.HEADERS_TIMEOUT_MS),
    keepAliveTimeoutMs: integerSetting(env, "KEEP_ALIVE_TIMEOUT_MS", stackIntegerSettings.KEEP_ALIVE_TIMEOUT_MS),
    maxConnections,
    database: {
      requireEmailVerification: requireEmailVerificationFrom(env) ?? false,
      anonymousNoteLimit: anonymousNoteLimitFrom(env) ?? databaseIntegerSettings.ANONYMOUS_NOTE_LIMIT.fallback,
      ...attachmentLimitsFrom(env),
    },
    sendStallTimeoutMs: integerSetting(env, "SEND_STALL_TIMEOUT_MS", stackIntegerSettings.SEND_STALL_TIMEOUT_MS),
  };
}

/** What the stack's server bounds, from its settings and the functions' body deadline. */
export function serverBounds(settings: StackSettings, bodyTimeoutMs: number): ServerBounds {
  return {
    headersTimeoutMs: settings.headersTimeoutMs,
    // The functions answer a late body 408 themselves; this backstop only ends a request they never read.
    requestTimeoutMs: settings.headersTimeoutMs + bodyTimeoutMs + 5_000,
    keepAliveTimeoutMs: settings.keepAliveTimeoutMs,
    maxConnections: settings.maxConnections,
    sendStallTimeoutMs: settings.sendStallTimeoutMs,
  };
}
