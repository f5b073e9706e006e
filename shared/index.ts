/**
 * What frontends import: the API contract (schemas and types) and a typed
 * client built on it. No server secrets and no runtime-specific API.
 *
 * @example
 * ```ts
 * import { createNotesClient, NotesApiError, type Note } from "../shared/index.ts";
 * ```
 */
export * from "../supabase/functions/_shared/contract.ts";
export { createNotesClient, type ListNotesOptions, NotesClient, type NotesClientOptions } from "./client.ts";
export { NotesApiError, type NotesApiErrorInit } from "./errors.ts";
export { type OperationName, operations, type OperationSpec } from "./operations.ts";
