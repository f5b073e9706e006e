/**
 * What frontends import: the API contract (schemas and types) and a typed
 * client built on it. No server secrets and no runtime-specific API.
 *
 * @example
 * ```ts
 * import { createNotesClient, NotesApiError, type Note } from "../shared/index.ts";
 * ```
 */
export * from "../supabase/functions/_shared/contract/mod.ts";
export { createNotesClient, NotesClient } from "./client.ts";
export type { AdminApi, ListUsersOptions } from "./client/admin.ts";
export type { AttachmentsApi, UploadOptions } from "./client/attachments.ts";
export type { AuthApi, SecurityEventsOptions } from "./client/auth.ts";
export {
  type IdentitiesApi,
  notStartedHere,
  type ProviderRedirect,
  providerReturnParameters,
  type ProviderSignInResult,
} from "./client/identities.ts";
export type { MfaApi } from "./client/mfa.ts";
export { type BrowserNavigation, pageNavigation } from "./client/navigation.ts";
export {
  browserCeremonies,
  type PasskeyCeremonies,
  type PasskeysApi,
  type PasskeySignInOptions,
} from "./client/passkeys.ts";
export type {
  CreateNoteOptions,
  DeleteNoteOptions,
  ListChangesOptions,
  ListNotesOptions,
  NotesApi,
} from "./client/notes.ts";
export type { NotesClientOptions, RequestOptions, SessionListener } from "./client/options.ts";
export type { WatchChangesOptions, WatchStatus } from "./client/watch.ts";
export {
  localSessionStorage,
  memorySessionStorage,
  type SessionStorage,
  tabSessionStorage,
} from "./session-storage.ts";
export {
  type ClientErrorCode,
  clientErrorCodes,
  NotesApiError,
  type NotesApiErrorCode,
  type NotesApiErrorInit,
} from "./errors.ts";
export {
  type JsonOperationName,
  lastEventIdHeader,
  type OperationName,
  operations,
  type OperationSpec,
  pathOf,
  type RedirectSuccess,
  type StreamEvents,
} from "./operations.ts";
