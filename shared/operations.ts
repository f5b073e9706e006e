/**
 * Every operation of the API in one table: where it lives, what it takes and
 * what it answers, in the contract's schemas. The typed client calls through
 * it and the OpenAPI document is generated from it, so the two cannot drift.
 *
 * @example
 * ```ts
 * import { operations } from "./operations.ts";
 * const { method, functionName } = operations.createNote; // "POST", "notes-create"
 * ```
 */
import type { z } from "zod";
import { accountOperations } from "./operations/accounts.ts";
import { adminOperations } from "./operations/admin.ts";
import { anonymousOperations } from "./operations/anonymous.ts";
import { attachmentOperations } from "./operations/attachments.ts";
import { notesOperations } from "./operations/notes.ts";
import { passkeyOperations } from "./operations/passkeys.ts";
import { providerOperations } from "./operations/providers.ts";
import { secondFactorOperations } from "./operations/second-factor.ts";
import type { OperationSpec } from "./operations/spec.ts";

export { lastEventIdHeader, type OperationSpec, type RedirectSuccess, type StreamEvents } from "./operations/spec.ts";

/**
 * The API's operations, keyed by the typed client's method names, one module per concern. Their order is the
 * OpenAPI document's.
 */
export const operations = {
  ...accountOperations,
  ...secondFactorOperations,
  ...providerOperations,
  ...passkeyOperations,
  ...anonymousOperations,
  ...adminOperations,
  ...notesOperations,
  ...attachmentOperations,
} as const satisfies Record<string, OperationSpec>;

export type OperationName = keyof typeof operations;

/** The operations that answer a JSON envelope: every one but the event streams and the browser navigations. */
export type JsonOperationName = {
  [K in OperationName]: (typeof operations)[K]["success"] extends { data: z.ZodType } ? K : never;
}[OperationName];

/** The path, below the functions' base URL, that clients call and the OpenAPI document lists for `spec`. */
export function pathOf(spec: OperationSpec): string {
  return spec.interfacePath ?? `/${spec.functionName}${spec.subpath ?? ""}`;
}
