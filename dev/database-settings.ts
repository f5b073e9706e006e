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
import { integerSettingOf } from "../supabase/functions/_shared/config/integer-settings.ts";

export interface DatabaseSettings {
  /** `REQUIRE_EMAIL_VERIFICATION`: an account whose address is not verified reaches no note. */
  requireEmailVerification: boolean;
  /** `ATTACHMENT_MAX_BYTES`: the reservation of a larger file is refused. */
  attachmentMaxBytes: number;
  /** `ATTACHMENT_QUOTA_BYTES`: the sum of one account's attachments, pending ones included. */
  attachmentQuotaBytes: number;
}

type Env = { get(name: string): string | undefined };

/** `REQUIRE_EMAIL_VERIFICATION` as given, or undefined when unset; throws `ConfigError` for another value. */
export function requireEmailVerificationFrom(env: Env): boolean | undefined {
  const raw = env.get("REQUIRE_EMAIL_VERIFICATION");
  if (raw === undefined || raw === "") return undefined;
  return booleanSetting(env, "REQUIRE_EMAIL_VERIFICATION", false);
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
      { require_email_verification: boolean; attachment_max_bytes: string; attachment_quota_bytes: string }[]
    >`
      update app.settings
      set require_email_verification = coalesce(${settings.requireEmailVerification ?? null}::boolean,
                                                require_email_verification),
          attachment_max_bytes = coalesce(${settings.attachmentMaxBytes ?? null}::bigint, attachment_max_bytes),
          attachment_quota_bytes = coalesce(${settings.attachmentQuotaBytes ?? null}::bigint, attachment_quota_bytes)
      returning require_email_verification, attachment_max_bytes, attachment_quota_bytes`;
    return {
      requireEmailVerification: row.require_email_verification,
      attachmentMaxBytes: Number(row.attachment_max_bytes),
      attachmentQuotaBytes: Number(row.attachment_quota_bytes),
    };
  } finally {
    await sql.end({ timeout: 5 });
  }
}
