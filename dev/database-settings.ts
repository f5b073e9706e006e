/**
 * The settings Postgres enforces itself (`app.settings`), written from the
 * environment by the local stack at every start and by `npm run db:push`, so
 * the notes policies and triggers hold every route (the functions and the Data
 * API alike) to the REQUIRE_EMAIL_VERIFICATION, ANONYMOUS_NOTE_LIMIT and
 * ATTACHMENT_* limits the operator gave.
 *
 * @example
 * ```ts
 * const stored = await writeDatabaseSettings(databaseUrl, { requireEmailVerification: true });
 * ```
 */
import postgres from "postgres";
import { booleanSetting, databaseIntegerSettings, integerSetting } from "../supabase/functions/_shared/config/mod.ts";
import { integerSettingOf } from "../supabase/functions/_shared/config/integer-settings.ts";

export interface DatabaseSettings {
  /** `REQUIRE_EMAIL_VERIFICATION`: an account whose address is not verified reaches no note. */
  requireEmailVerification: boolean;
  /** `ANONYMOUS_NOTE_LIMIT`: the notes an anonymous account may own before it must sign up. */
  anonymousNoteLimit: number;
  /** `ATTACHMENT_MAX_BYTES`: the reservation of a larger file is refused. */
  attachmentMaxBytes: number;
  /** `ATTACHMENT_QUOTA_BYTES`: the sum of one account's attachments, pending ones included. */
  attachmentQuotaBytes: number;
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

/** The attachment limits of the environment, their defaults where unset; throws `ConfigError` for a bad one. */
export function attachmentLimitsFrom(env: Env): Pick<DatabaseSettings, "attachmentMaxBytes" | "attachmentQuotaBytes"> {
  return {
    attachmentMaxBytes: integerSettingOf(env, "ATTACHMENT_MAX_BYTES"),
    attachmentQuotaBytes: integerSettingOf(env, "ATTACHMENT_QUOTA_BYTES"),
  };
}

/** Stores the settings given (an undefined one keeps the database's) and answers what the database holds now. */
export async function writeDatabaseSettings(
  databaseUrl: string,
  settings: Partial<DatabaseSettings>,
): Promise<DatabaseSettings> {
  const sql = postgres(databaseUrl, { prepare: false, max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<
      {
        require_email_verification: boolean;
        anonymous_note_limit: number;
        attachment_max_bytes: string;
        attachment_quota_bytes: string;
      }[]
    >`
      update app.settings
      set require_email_verification = coalesce(${settings.requireEmailVerification ?? null}::boolean,
                                                require_email_verification),
          anonymous_note_limit = coalesce(${settings.anonymousNoteLimit ?? null}::integer, anonymous_note_limit),
          attachment_max_bytes = coalesce(${settings.attachmentMaxBytes ?? null}::bigint, attachment_max_bytes),
          attachment_quota_bytes = coalesce(${settings.attachmentQuotaBytes ?? null}::bigint, attachment_quota_bytes)
      returning require_email_verification, anonymous_note_limit, attachment_max_bytes, attachment_quota_bytes`;
    return {
      requireEmailVerification: row.require_email_verification,
      anonymousNoteLimit: row.anonymous_note_limit,
      attachmentMaxBytes: Number(row.attachment_max_bytes),
      attachmentQuotaBytes: Number(row.attachment_quota_bytes),
    };
  } finally {
    await sql.end({ timeout: 5 });
  }
}
