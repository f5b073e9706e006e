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
import {
  createNoteBody,
  createPasswordBody,
  deletedNote,
  deleteNoteQuery,
  type EnvelopeKind,
  listNotesQuery,
  loginBody,
  note,
  noteList,
  passwordResetRequested,
  registerBody,
  requestPasswordResetBody,
  saveNoteBody,
  session,
} from "../supabase/functions/_shared/contract.ts";

export interface OperationSpec {
  method: "GET" | "POST" | "DELETE";
  /** The Supabase function serving it, below `/functions/v1`. */
  functionName: string;
  /** The interface's own path for auth operations (`/auth/login`), served by the `auth` function. */
  interfacePath?: string;
  envelope: EnvelopeKind;
  summary: string;
  description: string;
  body?: z.ZodType;
  query?: z.ZodObject;
  success: { status: number; data: z.ZodType };
  /** Every error status the operation can answer, each in the operation's error envelope. */
  errors: readonly number[];
}

// Statuses every operation can answer: wrong method, unexpected failure, database unavailable.
const always = [405, 500, 503] as const;
// Statuses of any JSON body: invalid, not arrived within the deadline, too large, not JSON.
const bodyErrors = [400, 408, 413, 415] as const;

/** The API's operations, keyed by the typed client's method names. */
export const operations = {
  register: {
    method: "POST",
    functionName: "auth-register",
    interfacePath: "/auth/register",
    envelope: "auth",
    summary: "Register an account",
    description: "Creates a STANDARD_USER account and signs it in. An email already registered is a 409; " +
      "too many sign-ups from one address get 429 with Retry-After.",
    body: registerBody,
    success: { status: 201, data: session },
    errors: [...bodyErrors, 401, 409, 429, ...always],
  },
  login: {
    method: "POST",
    functionName: "auth-login",
    interfacePath: "/auth/login",
    envelope: "auth",
    summary: "Log in",
    description: "Checks the password and answers with the user and an access token valid for 2 hours. " +
      "A wrong password and an unknown email get the same 401; a suspended account gets 403; too many " +
      "failed attempts for an email from one address, or attempts from one address, get 429 with Retry-After.",
    body: loginBody,
    success: { status: 200, data: session },
    errors: [...bodyErrors, 401, 403, 429, ...always],
  },
  requestPasswordReset: {
    method: "POST",
    functionName: "auth-request-password-reset",
    interfacePath: "/auth/request-password-reset",
    envelope: "auth",
    summary: "Request a password reset code",
    description: "Mails a 6-digit code (valid 15 minutes, 5 attempts, single use) to the email if it has an " +
      "account. The answer is the same either way.",
    body: requestPasswordResetBody,
    success: { status: 200, data: passwordResetRequested },
    errors: [...bodyErrors, 401, ...always],
  },
  createPassword: {
    method: "POST",
    functionName: "auth-create-password",
    interfacePath: "/auth/create-password",
    envelope: "auth",
    summary: "Set a password with a reset code",
    description: "Sets the password, marks the account verified and signs the user in. An unknown email is a " +
      "404; a wrong, expired or used code is a 400; a suspended account is a 403; too many attempts from one " +
      "address, or too many wrong codes for the account, get 429 with Retry-After.",
    body: createPasswordBody,
    success: { status: 200, data: session },
    errors: [...bodyErrors, 401, 403, 404, 429, ...always],
  },
  createNote: {
    method: "POST",
    functionName: "notes-create",
    envelope: "notes",
    summary: "Create a note",
    description: "Creates a note owned by the caller. At least one of title or content is required; an omitted " +
      "one is stored as an empty string. Status defaults to DRAFT.",
    body: createNoteBody,
    success: { status: 201, data: note },
    errors: [...bodyErrors, 401, ...always],
  },
  listNotes: {
    method: "GET",
    functionName: "notes-fetch",
    envelope: "notes",
    summary: "List the caller's notes",
    description: "One page of the caller's notes, newest first (createdAt, then id, descending), with the total.",
    query: listNotesQuery,
    success: { status: 200, data: noteList },
    errors: [400, 401, ...always],
  },
  saveNote: {
    method: "POST",
    functionName: "notes-save",
    envelope: "notes",
    summary: "Update a note",
    description: "Changes the given fields of one of the caller's notes and answers with the updated note. " +
      "Another user's note, or no note, is a 404.",
    body: saveNoteBody,
    success: { status: 200, data: note },
    errors: [...bodyErrors, 401, 404, ...always],
  },
  deleteNote: {
    method: "DELETE",
    functionName: "notes-delete",
    envelope: "notes",
    summary: "Delete a note",
    description: "Deletes one of the caller's notes and answers with its id. Another user's note, or no note, " +
      "is a 404.",
    query: deleteNoteQuery,
    success: { status: 200, data: deletedNote },
    errors: [400, 401, 404, ...always],
  },
} as const satisfies Record<string, OperationSpec>;

export type OperationName = keyof typeof operations;
