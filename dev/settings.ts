/**
 * The local stack's settings (DESIGN.md, "The local stack's contract"): the
 * environment where given, documented development defaults where not.
 */

/** The same development secret `supabase start` uses; never for a deployment. */
export const devJwtSecret = "super-secret-jwt-token-with-at-least-32-characters-long";
/** The development `apikey`; clients send it on `/auth/*` requests. */
export const devAnonKey = "local-dev-anon-key-not-for-production";

export interface StackSettings {
  port: number;
  /** A PostgreSQL to use; undefined means the embedded PGlite. */
  databaseUrl?: string;
  pgliteDataDir: string;
  jwtSecret: string;
  anonKey: string;
  /** Which settings fell back to a development default, for the start-up warning. */
  defaulted: string[];
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
  return {
    port,
    databaseUrl: env.get("DATABASE_URL") || undefined,
    pgliteDataDir: env.get("PGLITE_DATA_DIR") || ".data/pglite",
    jwtSecret: orDefault("JWT_SECRET", devJwtSecret),
    anonKey: orDefault("SUPABASE_ANON_KEY", devAnonKey),
    defaulted,
  };
}
