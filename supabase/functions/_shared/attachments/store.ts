/**
 * The configured object store, or a 503 before anything is reserved or read
 * when the functions have none (`SUPABASE_URL`, `SUPABASE_SERVICE_ROLE_KEY`).
 *
 * @example
 * ```ts
 * const store = requireObjectStore();
 * ```
 */
import { getConfig, type ObjectStore } from "../config/mod.ts";
import { ServiceUnavailableError } from "../http/errors.ts";

/** The object store of attachments; throws 503 when none is configured. */
export function requireObjectStore(): ObjectStore {
  const { store } = getConfig().attachments;
  if (!store) {
    throw new ServiceUnavailableError({
      message: "Attachments are not configured (SUPABASE_URL, SUPABASE_SERVICE_ROLE_KEY)",
    });
  }
  return store;
}
