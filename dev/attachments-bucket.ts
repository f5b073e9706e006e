/**
 * Creates the private attachments bucket, or brings its limits up to date, through Storage's own API with the
 * service role key: the local stack at every start, and `npm run db:push` where `SUPABASE_URL` and
 * `SUPABASE_SERVICE_ROLE_KEY` name a hosted project. The bucket refuses what the service would: files over
 * `ATTACHMENT_MAX_BYTES` and types other than those an attachment may have.
 *
 * @example
 * ```ts
 * const created = await setUpAttachmentsBucket();
 * ```
 */
import { attachmentSettingsFrom } from "../supabase/functions/_shared/config/attachments.ts";
import { attachmentTypes } from "../supabase/functions/_shared/contract/attachments.ts";
import { ensureBucket } from "../supabase/functions/_shared/attachments/object-store.ts";

/** True when the bucket was created, false when it existed; undefined when no store is configured. */
export async function setUpAttachmentsBucket(env: Deno.Env = Deno.env): Promise<boolean | undefined> {
  const { store, maxBytes } = attachmentSettingsFrom(env);
  if (!store) return undefined;
  return await ensureBucket(store, { fileSizeLimit: maxBytes, allowedMimeTypes: attachmentTypes });
}
