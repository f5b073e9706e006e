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
export {
  type AdminApi,
  type BrowserNavigation,
  type CreateNoteOptions,
  createNotesClient,
  type DeleteNoteOptions,
  type ListChangesOptions,
  type ListNotesOptions,
  type ListUsersOptions,
  type MfaApi,
  NotesClient,
  type NotesClientOptions,
  notStartedHere,
  pageNavigation,
  type ProviderRedirect,
  providerReturnParameters,
  type ProviderSignInResult,
  type RequestOptions,
  type SecurityEventsOptions,
  type SessionListener,
  type WatchChangesOptions,
  type WatchStatus,
} from "./client.ts";
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
