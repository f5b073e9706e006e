/**
 * The settings Postgres enforces itself (`app.settings`), written from the
 * environment by the local stack at every start and by `npm run db:push`, so
 * the notes policies and triggers hold every route (the functions and the Data
 * API alike) to the REQUIRE_EMAIL_VERIFICATION and ANONYMOUS_NOTE_LIMIT the
 * operator gave.
 *
 * @example
 * ```ts
 * const stored = await writeDatabaseSettings(databaseUrl, { requireEmailVerification: true });
 * ```
 */
import postgres from "postgres";
import { booleanSetting, databaseIntegerSettings, integerSetting } from "../supabase/functions/_shared/config/mod.ts";

export interface DatabaseSettings {
  /** `REQUIRE_EMAIL_VERIFICATION`: an account whose address is not verified reaches no note. */
  requireEmailVerification: boolean;
  /** `ANONYMOUS_NOTE_LIMIT`: the notes an anonymous account may own before it must sign up. */
  anonymousNoteLimit: number;
}

type Env = { get(name: string): string | undefined };

const isUnset = (env: Env, name: string) => {
  const raw = env.get(name);
  return raw === undefined || raw === "";
};

/** `REQUIRE_EMAIL_VERIFICATION` as given, or undefined when unset; throws `ConfigError` for another value. */
export function requireEmailVerificationFrom(env: Env): boolean | undefined {
  if (isUnset(env, "REQUIRE_EMAIL_VERIFICATION")) return undefined;
  return booleanSetting(env, "REQUIRE_EMAIL_VERIFICATION", false);
}

/** `ANONYMOUS_NOTE_LIMIT` as given, or undefined when unset; throws `ConfigError` outside its range. */
export function anonymousNoteLimitFrom(env: Env): number | undefined {
  if (isUnset(env, "ANONYMOUS_NOTE_LIMIT")) return undefined;
  return integerSetting(env, "ANONYMOUS_NOTE_LIMIT", databaseIntegerSettings.ANONYMOUS_NOTE_LIMIT);
}

/** Stores the settings given (an undefined one keeps the database's) and answers what the database holds now. */
export async function writeDatabaseSettings(
  databaseUrl: string,
  settings: Partial<DatabaseSettings>,
): Promise<DatabaseSettings> {
  const sql = postgres(databaseUrl, { prepare: false, max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ require_email_verification: boolean; anonymous_note_limit: number }[]>`
      update app.settings
      set require_email_verification = coalesce(${settings.requireEmailVerification ?? null}::boolean,
                                                require_email_verification),
          anonymous_note_limit = coalesce(${settings.anonymousNoteLimit ?? null}::integer, anonymous_note_limit)
      returning require_email_verification, anonymous_note_limit`;
    return { requireEmailVerification: row.require_email_verification, anonymousNoteLimit: row.anonymous_note_limit };
  } finally {
    await sql.end({ timeout: 5 });
  }
}
