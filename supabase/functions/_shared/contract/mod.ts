/**
 * The API contract: request and response shapes of every endpoint, as zod
 * schemas with the TypeScript types inferred from them, one module per
 * concern. This module is the one import of the whole contract, for the typed
 * client (`shared/` re-exports it), the OpenAPI generator and tests; a
 * function imports only its concern's module, so it builds only the schemas
 * it uses. None uses a Deno or server-only API, so they load in browsers,
 * Node and Deno.
 *
 * @example
 * ```ts
 * import { loginBody } from "./mod.ts";
 * const body = loginBody.parse({ email: "ada@example.com", password: "correct horse" });
 * ```
 */
export {
  type ErrorCode,
  errorCodes,
  errorStatuses,
  type RefreshErrorCode,
  refreshErrorCodes,
  type TokenErrorCode,
  tokenErrorCodes,
} from "./error-codes.ts";
export { limits, noteStatuses, type Pagination, pagination, userRoles, userStatuses } from "./common.ts";
export * from "./accounts.ts";
export * from "./second-factor.ts";
export * from "./identities.ts";
export * from "./passkeys.ts";
export * from "./notes.ts";
export * from "./attachments.ts";
export * from "./admin.ts";
export * from "./envelopes.ts";
