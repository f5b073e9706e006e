/**
 * What a test needs to talk to the running stack as a client would: plain
 * fetch over HTTP, the contract's schemas to check the answers, and the stack's
 * log to read a reset code from, as a developer does locally.
 */
import { readFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { inject } from "vitest";
import { authSuccessEnvelope, bearer, session } from "../../supabase/functions/_shared/contract/mod.ts";
import { testAnonKey } from "../../dev/harness/stack.ts";

export const anonKey = testAnonKey;

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

export interface ApiRequest {
  method?: string;
  /** Serialised as JSON unless it is already a string. */
  body?: unknown;
  /** Sent as `Authorization: Bearer <token>` unless it already starts with "Bearer ". */
  token?: string;
  /** The `apikey` header; `null` sends none. Defaults to the stack's key. */
  apiKey?: string | null;
  headers?: Record<string, string>;
  /** Another stack's base URL; defaults to the run's shared stack. */
  baseUrl?: string;
}

/** Calls `path` (below `/functions/v1`) and returns status, headers and parsed body. */
export async function call(path: string, request: ApiRequest = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = {};
  if (request.apiKey !== null) headers.apikey = request.apiKey ?? anonKey;
  if (request.body !== undefined) headers["Content-Type"] = "application/json";
  if (request.token) {
    headers.Authorization = bearer(request.token);
  }
  Object.assign(headers, request.headers);
  const response = await fetch(`${request.baseUrl ?? inject("baseUrl")}${path}`, {
    method: request.method ?? (request.body === undefined ? "GET" : "POST"),
    // A redirect (a provider sign-in's start and callback) is the answer under test, not a page to follow.
    redirect: "manual",
    headers,
    body: request.body === undefined
      ? undefined
      : typeof request.body === "string"
      ? request.body
      : JSON.stringify(request.body),
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, body, text };
}

/**
 * A client address (IPv6 documentation range) no other test uses, for stacks that trust `x-forwarded-for`.
 * Each is in a /64 of its own, since the limits count an IPv6 client by its /64.
 */
export function freshAddress(): string {
  const hex = randomUUID().replaceAll("-", "");
  return `2001:db8:${hex.slice(0, 4)}:${hex.slice(4, 8)}::${hex.slice(8, 12)}`;
}

/** An email no other test uses. */
export function uniqueEmail(label = "user"): string {
  return `${label}-${randomUUID().slice(0, 8)}@example.com`;
}

export interface RegisteredUser {
  id: string;
  email: string;
  password: string;
  /** The `accessToken` exactly as the API returned it: `"Bearer <jwt>"`. */
  accessToken: string;
  refreshToken: string;
}

/** Registers a fresh user and returns its credentials and token. */
export async function registerUser(label = "user", options: { baseUrl?: string } = {}): Promise<RegisteredUser> {
  const email = uniqueEmail(label);
  const password = "correct horse battery";
  const response = await call("/auth/register", {
    body: { name: `Test ${label}`, email, password },
    baseUrl: options.baseUrl,
  });
  if (response.status !== 201) throw new Error(`register failed: ${response.status} ${response.text}`);
  const { payload, accessToken, refreshToken } = authSuccessEnvelope(session).parse(response.body).data;
  return { id: payload.id, email, password, accessToken, refreshToken };
}

/**
 * The stack's log so far (the shared stack's unless another log file is
 * given), up to its last whole line. The stack appends stdout and stderr to
 * the file as it runs, each batch of lines in one write: a read can land in
 * the middle of a write, and the line being written then waits for the next
 * read. Every line returned is whole, whatever the order of the two streams.
 */
export function stackLog(logFile = inject("logFile")): string {
  const log = readFileSync(logFile, "utf8");
  return log.slice(0, log.lastIndexOf("\n") + 1);
}

/**
 * Waits until `find` finds something in the stack's log and returns it. The
 * stack writes to stdout and stderr, whose lines arrive in no fixed order.
 */
export async function waitForLog<T>(
  find: (log: string) => T | undefined,
  what: string,
  logFile = inject("logFile"),
): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const found = find(stackLog(logFile));
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`no ${what} in the stack log`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The mails of one kind, by their subject as the service words it. */
export type MailKind = "reset" | "verification" | "sign-in";
const subjects: Record<MailKind, string> = {
  reset: "Your password reset code",
  verification: "Confirm your email address",
  "sign-in": "Your sign-in code",
};

/** The codes of every `kind` mail to `email` the log shows, oldest first. */
function codesMailed(log: string, email: string, kind: MailKind): string[] {
  return [...log.matchAll(/\[mail\] to=(\S+) subject="([^"]*)" .*?code is (\d{6,8})/g)]
    .filter((match) => match[1] === email && match[2] === subjects[kind])
    .map((match) => match[3]);
}

/**
 * Waits for the newest mail of `kind` (a reset code by default) to `email` in
 * the stack's log, ignoring the first `after` of them, and returns its code.
 */
export function readMailedCode(
  email: string,
  options: { kind?: MailKind; after?: number; logFile?: string } = {},
): Promise<string> {
  const { kind = "reset", after = 0, logFile = inject("logFile") } = options;
  return waitForLog(
    (log) => {
      const codes = codesMailed(log, email, kind);
      return codes.length > after ? codes[codes.length - 1] : undefined;
    },
    `${kind} mail to ${email}`,
    logFile,
  );
}

/** Waits for the newest reset-code mail to `email`, ignoring the first `after`, and returns the code. */
export function readResetCode(email: string, after = 0, logFile = inject("logFile")): Promise<string> {
  return readMailedCode(email, { after, logFile });
}

/** How many mails of `kind` (reset codes by default) to `email` the log shows. */
export function countResetMails(email: string, logFile = inject("logFile"), kind: MailKind = "reset"): number {
  return codesMailed(stackLog(logFile), email, kind).length;
}
