/**
 * The settings of attachments: their limits (`ATTACHMENT_MAX_BYTES`, `ATTACHMENT_QUOTA_BYTES`, which Postgres
 * holds too, in `app.settings`) and the object store the bytes go to: Supabase Storage's HTTP API at
 * `SUPABASE_URL` + `/storage/v1`, reached with the service role key (`SUPABASE_SERVICE_ROLE_KEY`), in the private
 * bucket `ATTACHMENTS_BUCKET`. Hosted Supabase sets the first two in every function; the local stack serves the
 * same endpoints itself and sets them too. Without them the attachment endpoints answer 503 and nothing else changes.
 *
 * @example
 * ```ts
 * const { maxBytes, store } = attachmentSettingsFrom(Deno.env);
 * ```
 */
import { integerSettingOf } from "./integer-settings.ts";
import { ConfigError, type Env } from "./settings.ts";

/** Where attachments' bytes are kept, and the key that may touch them. */
export interface ObjectStore {
  /** Storage's API base, e.g. `https://<project>.supabase.co/storage/v1`. */
  url: string;
  /** The service role key: the only credential the private bucket accepts besides a signed URL. */
  serviceKey: string;
  bucket: string;
}

export interface AttachmentSettings {
  /** `ATTACHMENT_MAX_BYTES`: the largest file. */
  maxBytes: number;
  /** `ATTACHMENT_QUOTA_BYTES`: the sum of one account's files, pending uploads included. */
  quotaBytes: number;
  /** `ATTACHMENT_URL_SECONDS`: how long a signed download URL serves the file. */
  urlSeconds: number;
  /** Undefined while `SUPABASE_URL` or `SUPABASE_SERVICE_ROLE_KEY` is unset. */
  store: ObjectStore | undefined;
}

/** The bucket's name when `ATTACHMENTS_BUCKET` is unset. */
export const defaultAttachmentsBucket = "attachments";
// Supabase Storage's bucket names: lowercase letters, digits, dots, hyphens and underscores.
const bucketPattern = /^[a-z0-9][a-z0-9._-]{1,62}$/;

/** Reads the attachment settings; throws `ConfigError` for a bad one. */
export function attachmentSettingsFrom(env: Env): AttachmentSettings {
  const bucket = env.get("ATTACHMENTS_BUCKET") || defaultAttachmentsBucket;
  if (!bucketPattern.test(bucket)) {
    throw new ConfigError(
      `ATTACHMENTS_BUCKET must be a bucket name (lowercase letters, digits, . _ -), got "${bucket}"`,
    );
  }
  const projectUrl = env.get("SUPABASE_URL");
  if (projectUrl && !URL.canParse(projectUrl)) throw new ConfigError("SUPABASE_URL must be a URL");
  const serviceKey = env.get("SUPABASE_SERVICE_ROLE_KEY");
  return {
    maxBytes: integerSettingOf(env, "ATTACHMENT_MAX_BYTES"),
    quotaBytes: integerSettingOf(env, "ATTACHMENT_QUOTA_BYTES"),
    urlSeconds: integerSettingOf(env, "ATTACHMENT_URL_SECONDS"),
    store: projectUrl && serviceKey
      ? { url: `${projectUrl.replace(/\/+$/, "")}/storage/v1`, serviceKey, bucket }
      : undefined,
  };
}
