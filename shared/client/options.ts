/** What a client and each of its calls are configured with, and the shapes every concern's module shares. */
import type { z } from "zod";
import type { PasskeyOptions, Session } from "../../supabase/functions/_shared/contract/mod.ts";
import type { CallDeadline } from "../deadline.ts";
import type { NotesApiError } from "../errors.ts";
import type { OperationName, operations } from "../operations.ts";
import type { SessionStorage } from "../session-storage.ts";
import type { BrowserNavigation } from "./navigation.ts";

export interface NotesClientOptions {
  /** The functions' base URL: `https://<project-ref>.supabase.co/functions/v1`, or the one `npm start` prints. */
  url: string;
  /** The project's public key, sent as the `apikey` header. */
  anonKey: string;
  /** A fetch to use instead of the global one (for tests, proxies, or older runtimes). */
  fetch?: typeof globalThis.fetch;
  /**
   * Where the session is kept: `memorySessionStorage()` (the default),
   * `localSessionStorage()` (survives reloads, shared by tabs) or
   * `tabSessionStorage()`. See session-storage.ts for what each exposes.
   */
  storage?: SessionStorage;
  /**
   * Called when the session has ended (a refresh was answered 401: signed out
   * elsewhere, expired, revoked, or its refresh token reused), after the
   * client has dropped it and before the call throws this same error.
   * `error.code` says why (`session_revoked`, `session_expired`, ...).
   */
  onUnauthorized?: (error: NotesApiError) => void;
  /** How long before `expiresAt` the client refreshes ahead of a call; 60 seconds by default. */
  refreshMarginSeconds?: number;
  /**
   * How the client reads and moves the browser's page for a provider sign-in: the page's own `location` and
   * `history` by default, where there is a page. Give one in tests, in a webview, or wherever no page is.
   */
  navigation?: BrowserNavigation;
  /**
   * The browser's half of the passkey ceremonies (`navigator.credentials`): `@simplewebauthn/browser` by default.
   * Give one in tests, or in a webview with a bridge of its own.
   */
  passkeyCeremonies?: PasskeyCeremonies;
  /**
   * How long a call may wait for its answer, in milliseconds; 15 000 by
   * default. One deadline per call: a refresh of the session or a retry
   * within the call spends the same time, never more. Past it the call throws
   * status 0, code `timeout`. Each call may set its own (`RequestOptions`).
   */
  timeoutMs?: number;
}

/**
 * The browser's half of the ceremonies: `navigator.credentials.create()` and `.get()` with options in their JSON
 * form, answering `credential.toJSON()`. `@simplewebauthn/browser` by default; give another in tests or in a
 * webview with its own bridge.
 */
export interface PasskeyCeremonies {
  create(options: PasskeyOptions["options"]): Promise<unknown>;
  get(options: PasskeyOptions["options"], autofill: boolean): Promise<unknown>;
}

/** What every method takes, in its last argument, to bound or cancel that one call. */
export interface RequestOptions {
  /** This call's deadline in milliseconds, instead of the client's `timeoutMs`. */
  timeoutMs?: number;
  /** Cancels the call when it aborts: it throws status 0, code `aborted`. */
  signal?: AbortSignal;
}

/** Called with the session after every change: signed in, refreshed (here or in another tab), or undefined when signed out. */
export type SessionListener = (session: Session | undefined) => void;

/** What a method takes as its body: the contract's request schema before defaults and trimming. */
export type BodyOf<K extends OperationName> = (typeof operations)[K] extends { body: z.ZodType }
  ? z.input<(typeof operations)[K]["body"]>
  : never;

/** What one request of a call sends, and the deadline of the call it belongs to. */
export interface CallInput {
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  headers?: Record<string, string>;
  /** The deadline of the whole call that sends this request. */
  deadline: CallDeadline;
}
