/**
 * The settings Postgres enforces itself (`app.settings`), written from the
 * environment by the local stack at every start and by `npm run db:push`, so
 * the notes policies hold every route (the functions and the Data API alike)
 * to the REQUIRE_EMAIL_VERIFICATION the operator gave.
 *
 * @example
 * ```ts
 * const stored = await writeDatabaseSettings(databaseUrl, { requireEmailVerification: true });
 * ```
 */
import postgres from "postgres";
import { booleanSetting } from "../supabase/functions/_shared/config/mod.ts";

export interface DatabaseSettings {
  /** `REQUIRE_EMAIL_VERIFICATION`: an account whose address is not verified reaches no note. */
  requireEmailVerification: boolean;
}

type Env = { get(name: string): string | undefined };

/** `REQUIRE_EMAIL_VERIFICATION` as given, or undefined when unset; throws `ConfigError` for another value. */
export function requireEmailVerificationFrom(env: Env): boolean | undefined {
  const raw = env.get("REQUIRE_EMAIL_VERIFICATION");
  if (raw === undefined || raw === "") return undefined;
  return booleanSetting(env, "REQUIRE_EMAIL_VERIFICATION", false);
}

/** Stores the settings given (an undefined one keeps the database's) and answers what the database holds now. */
export async function writeDatabaseSettings(
  databaseUrl: string,
  settings: Partial<DatabaseSettings>,
): Promise<DatabaseSettings> {
  const sql = postgres(databaseUrl, { prepare: false, max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ require_email_verification: boolean }[]>`
      update app.settings
      set require_email_verification = coalesce(${settings.requireEmailVerification ?? null}::boolean,
                                                require_email_verification)
      returning require_email_verification`;
    return { requireEmailVerification: row.require_email_verification };
  } finally {
    await sql.end({ timeout: 5 });
  }
}
