/**
 * Example values for the OpenAPI document: one request and one answer per
 * operation, and one message per error status. They are data, not schemas; a
 * test checks each against the schema it illustrates.
 *
 * @example
 * ```ts
 * import { successExamples } from "./examples.ts";
 * successExamples.createNote; // { message: "Note created successfully", success: true, data: {...} }
 * ```
 */
import { limits, titleOrContentRequired, type TokenErrorCode } from "../../supabase/functions/_shared/contract.ts";
import type { OperationName } from "../../shared/operations.ts";

const userId = "7b0e3c52-5d8f-4a53-9a3e-0f3c2a9d1e44";
const noteId = "c1a2f4d6-8e0b-4c2d-9f1a-3b5c7d9e1f20";
const at = "2026-01-15T09:30:00.000Z";

const user = {
  id: userId,
  name: "Ada Lovelace",
  phoneNumber: null,
  email: "ada@example.com",
  role: "STANDARD_USER",
  status: "ACTIVE",
  isVerified: false,
  createdAt: at,
  updatedAt: at,
};
const session = {
  payload: user,
  accessToken: "Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI3YjBl...sig",
  expiresAt: "2026-01-15T11:30:00.000Z",
};
const note = {
  id: noteId,
  title: "Groceries",
  content: "Eggs, flour, milk",
  status: "DRAFT",
  createdBy: userId,
  createdAt: at,
  updatedAt: at,
};

/** A request body per operation that takes one. */
export const requestExamples: Partial<Record<OperationName, unknown>> = {
  register: { name: "Ada Lovelace", email: "ada@example.com", password: "correct horse battery" },
  login: { email: "ada@example.com", password: "correct horse battery" },
  requestPasswordReset: { email: "ada@example.com" },
  createPassword: { email: "ada@example.com", password: "a new long secret", code: "123456" },
  createNote: { title: "Groceries", content: "Eggs, flour, milk" },
  saveNote: { id: noteId, status: "PUBLISHED" },
};

/** The success answer of each operation. */
export const successExamples: Record<OperationName, unknown> = {
  register: { success: true, statusCode: 201, message: "User registered successfully", data: session },
  login: { success: true, statusCode: 200, message: "Login successful", data: session },
  requestPasswordReset: {
    success: true,
    statusCode: 200,
    message: "If an account exists for this email, a reset code has been sent to it",
    data: {},
  },
  createPassword: {
    success: true,
    statusCode: 200,
    message: "Password set successfully",
    data: { ...session, payload: { ...user, isVerified: true } },
  },
  createNote: { message: "Note created successfully", success: true, data: note },
  listNotes: {
    message: "Notes fetched successfully",
    success: true,
    data: { notes: [note], pagination: { total: 1, limit: 10, offset: 0, hasMore: false }, userId },
  },
  saveNote: {
    message: "Note saved successfully",
    success: true,
    data: { ...note, status: "PUBLISHED", updatedAt: "2026-01-15T10:00:00.000Z" },
  },
  deleteNote: { message: "Note deleted successfully", success: true, data: { id: noteId } },
};

/** An error answer's example: its message, the field a 400 names, the `code` a notes 401 carries. */
export interface ErrorExample {
  message: string;
  field?: string;
  code?: TokenErrorCode;
}

const commonErrors: Record<number, ErrorExample> = {
  400: { message: "Request body must be valid JSON" },
  401: { message: "Invalid apikey" },
  404: { message: "Note not found" },
  405: { message: "Method not allowed" },
  408: { message: "Request body took too long to arrive" },
  413: { message: `Request body must be at most ${limits.bodyMaxBytes} bytes` },
  415: { message: "Content-Type must be application/json" },
  429: { message: "Too many requests from this address; try again later" },
  500: { message: "Internal server error" },
  503: { message: "Service temporarily unavailable" },
};

// Where an operation words a status its own way.
const specificErrors: Partial<Record<OperationName, Record<number, ErrorExample>>> = {
  register: {
    400: { field: "password", message: `password must be at least ${limits.passwordMinChars} characters` },
    409: { message: "An account with this email already exists" },
  },
  login: {
    401: { message: "Invalid email or password" },
    403: { message: "Account is suspended" },
    429: { message: "Too many login attempts; try again later" },
  },
  requestPasswordReset: { 400: { field: "email", message: "email must be a valid email address" } },
  createPassword: {
    400: { field: "code", message: "Invalid or expired code" },
    403: { message: "Account is suspended" },
    404: { message: "User not found" },
  },
  createNote: {
    400: { message: titleOrContentRequired },
    401: { message: "Missing access token", code: "token_missing" },
  },
  listNotes: {
    400: { field: "limit", message: `limit must be an integer from 1 to ${limits.listLimitMax}` },
    401: { message: "Access token expired", code: "token_expired" },
  },
  saveNote: {
    400: { message: "At least one of title, content or status is required" },
    401: { message: "Invalid access token", code: "token_invalid" },
  },
  deleteNote: {
    400: { field: "id", message: "id is required" },
    401: { message: "Access token revoked", code: "token_revoked" },
  },
};

/** The example of `status` for `operation`. */
export function errorExample(operation: OperationName, status: number): ErrorExample {
  return specificErrors[operation]?.[status] ?? commonErrors[status] ?? { message: "Request failed" };
}
