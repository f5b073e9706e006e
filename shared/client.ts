/**
 * A typed client for the notes service. It runs unchanged in browsers, Node
 * (20+) and Deno: it needs only `fetch` and `URL`. Every method answers the
 * `data` of the success envelope, checked against the contract; every failure,
 * an unreachable service included, throws a {@link NotesApiError}.
 *
 * Sessions: login, register and create-password keep the session (access
 * token, refresh token, expiry, user) in the client's storage. The client
 * refreshes the access token shortly before it expires, and once after a call
 * is answered 401, then retries that call; one refresh at a time, shared by
 * concurrent calls, and across tabs that share a storage. A refresh whose
 * answer is lost (or a 503) is sent again at once, within the server's grace
 * for the token it replaced (`_shared/contract/refresh-budget.ts`). It drops the session only when a
 * refresh is answered 401 (the session ended, expired or was revoked), never
 * on a network error, a timeout or a 5xx; the call that needed the refresh
 * then throws that 401, the error `onUnauthorized` is given. Without a
 * session, a call that acts for a signed-in user throws `not_signed_in` and
 * sends nothing.
 *
 * Deadlines: a call that has no answer within `timeoutMs` (15 s unless the
 * client or the call says otherwise) throws a {@link NotesApiError} with
 * status 0 and code `timeout`, and sends nothing more. The deadline covers
 * the whole call, the refresh of the session and the retry of a create
 * included; a call given a `signal` also stops, with code `aborted`, when it
 * aborts.
 *
 * @example
 * ```ts
 * const client = createNotesClient({ url: "http://127.0.0.1:54321/functions/v1", anonKey });
 * await client.login({ email: "ada@example.com", password: "correct horse" });
 * const note = await client.createNote({ title: "Groceries", content: "Eggs" });
 * for await (const page of client.notePages({ limit: 50 })) console.log(page.notes.length);
 * ```
 */
import type { z } from "zod";
import {
  type Activation,
  authErrorEnvelope,
  authSuccessEnvelope,
  bearer,
  type ChangeList,
  type DeletedNote,
  type EndedSession,
  type Enrollment,
  type FactorList,
  idempotencyKeyHeader,
  type Identity,
  type IdentityLinkStart,
  type IdentityList,
  type LogoutScope,
  type ManagedUserList,
  type Note,
  type NoteChange,
  noteChange,
  type NoteList,
  type NoteOrder,
  notesErrorEnvelope,
  notesSuccessEnvelope,
  type Reauthentication,
  type Recovery,
  type SecurityEvent,
  type Session,
  type SessionInfo,
  streamReady,
  streamReset,
  tokenErrorCodes,
  type UnlinkedIdentity,
  type User,
} from "../supabase/functions/_shared/contract/mod.ts";
import { refreshAttemptMs, refreshAttempts } from "../supabase/functions/_shared/contract/refresh-budget.ts";
import { CallDeadline, defaultTimeoutMs } from "./deadline.ts";
import { NotesApiError } from "./errors.ts";
import { backoffMs, eventStreamFields, pause } from "./event-stream.ts";
import {
  type JsonOperationName,
  lastEventIdHeader,
  type OperationName,
  operations,
  type OperationSpec,
  pathOf,
} from "./operations.ts";
import { calculatePKCECodeChallenge, generateRandomCodeVerifier } from "oauth4webapi";
import { memorySessionStorage, type SessionStorage } from "./session-storage.ts";
import { TabCoordinator, type TabMessage } from "./tab-coordinator.ts";

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
   * How long a call may wait for its answer, in milliseconds; 15 000 by
   * default. One deadline per call: a refresh of the session or a retry
   * within the call spends the same time, never more. Past it the call throws
   * status 0, code `timeout`. Each call may set its own (`RequestOptions`).
   */
  timeoutMs?: number;
}

/**
 * The page a provider sign-in leaves and comes back to, and what it keeps across that round trip. A browser's is
 * `location`, `history` and `sessionStorage` ({@link pageNavigation}); anything else that can show a URL, say where
 * it is, and keep a string until it comes back will do.
 */
export interface BrowserNavigation {
  /** The page's URL now (`location.href`). */
  url(): string;
  /** Leaves the page for `url` (`location.assign(url)`). */
  assign(url: string): void;
  /** Rewrites the page's URL without leaving it or adding to its history (`history.replaceState`). */
  replace(url: string): void;
  /**
   * Keeps the PKCE verifier of the sign-in this page starts until the browser comes back to it (this tab's
   * `sessionStorage`), or forgets it when undefined. Only the page that keeps it can exchange the code.
   */
  saveVerifier(verifier: string | undefined): void;
  /** The verifier {@link saveVerifier} kept, if any. */
  loadVerifier(): string | undefined;
}

/** Where {@link pageNavigation} keeps a sign-in's PKCE verifier in `sessionStorage`. */
const verifierKey = "notes-provider-sign-in-verifier";

/** This tab's `sessionStorage`, or undefined where there is none or it refuses to be used (some private modes). */
function tabStorage(): {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
} | undefined {
  try {
    const storage = (globalThis as { sessionStorage?: Storage }).sessionStorage;
    storage?.getItem(verifierKey);
    return storage;
  } catch {
    return undefined;
  }
}

/** The browser's own page, or undefined where there is none (Node, Deno, a worker). */
export function pageNavigation(): BrowserNavigation | undefined {
  const page = globalThis as unknown as {
    location?: { href: string; assign(url: string): void };
    history?: { state: unknown; replaceState(data: unknown, unused: string, url: string): void };
  };
  let location: typeof page.location;
  try {
    // Deno without --location throws on reading `location`.
    location = page.location;
  } catch {
    return undefined;
  }
  const { history } = page;
  if (!location || typeof location.assign !== "function" || !history) return undefined;
  const storage = tabStorage();
  // Without a usable sessionStorage, the verifier lives as long as this page: enough for a link's href opened here.
  let inMemory: string | undefined;
  return {
    url: () => location.href,
    assign: (url) => location.assign(url),
    replace: (url) => history.replaceState(history.state, "", url),
    saveVerifier: (verifier) => {
      inMemory = verifier;
      if (verifier === undefined) storage?.removeItem(verifierKey);
      else storage?.setItem(verifierKey, verifier);
    },
    loadVerifier: () => storage?.getItem(verifierKey) ?? inMemory,
  };
}

/** Where a provider sign-in or link starts, and where the browser comes back to. */
export interface ProviderRedirect {
  /** A provider the service is configured with (`OIDC_PROVIDERS`), e.g. `google`. */
  provider: string;
  /**
   * The app's page the browser returns to, absolute, exactly as the service lists it in `OAUTH_REDIRECT_URLS`
   * (query included). That page calls {@link NotesClient.completeProviderSignIn}.
   */
  redirectTo: string;
}

/** The `error` of a code that reached a tab which started no sign-in: it was not exchanged. */
export const notStartedHere = "not_started_here";

/** The query parameters a provider sign-in's return adds to the app's URL, which completing it removes. */
export const providerReturnParameters = [
  "code",
  "link_code",
  "linked",
  "reauthenticated",
  "error",
  "error_description",
] as const;

/**
 * What {@link NotesClient.completeProviderSignIn} found in the page's URL:
 * - `signed_in`: the one-time code was exchanged and the session kept, as login keeps it. When `mfaRequired` is
 *   true the session must make the second step (`client.mfa.verify` or `recover`) before anything else, as after
 *   a login.
 * - `linked`: a link the signed-in user started is complete; `provider` can now sign in to this account. `identity`
 *   is the one linked, when this call completed the link (the service hands the asking session a link code, which
 *   this call sends), and undefined when the identity was the account's already.
 * - `reauthenticated`: a proof this session asked for at `provider` ({@link NotesClient.reauthenticateWithProvider})
 *   is recorded: for 5 minutes the session may change how the account signs in.
 * - `error`: nothing was signed in or linked; `error` is one of the contract's `providerSignInErrors`
 *   (`access_denied`, `identity_not_linked`, ...) and `description` the service's hint. Show your own words. Or
 *   `error` is `not_started_here`: a code arrived in a tab that started no sign-in (one an attacker handed this
 *   browser, to sign it in to their account), and was not used.
 * - `none`: the URL holds no provider return: an ordinary start of the app.
 */
export type ProviderSignInResult =
  | { outcome: "signed_in"; session: Session; mfaRequired: boolean }
  | { outcome: "linked"; provider: string; identity: Identity | undefined }
  | { outcome: "reauthenticated"; provider: string }
  | { outcome: "error"; error: string; description: string | undefined }
  | { outcome: "none" };

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
type BodyOf<K extends OperationName> = (typeof operations)[K] extends { body: z.ZodType }
  ? z.input<(typeof operations)[K]["body"]>
  : never;

/** Paging and filters of {@link NotesClient.listNotes}; the API's defaults are limit 10, offset 0, every note. */
export interface ListNotesOptions {
  /** 1 to 100. */
  limit?: number;
  /** 0 or more. */
  offset?: number;
  /** Only notes of this status. */
  status?: Note["status"];
  /** Words that must all occur in the title or content (each as the start of a word), at most 200 characters. */
  q?: string;
  /** Newest first by `createdAt` (the default) or by `updatedAt`. */
  order?: NoteOrder;
}

/** Paging of {@link NotesClient.listChanges} and {@link NotesClient.syncNotes}. */
export interface ListChangesOptions {
  /** `cursor` of an earlier answer; omit it to start with every current note. */
  since?: string;
  /** 1 to 100 changes per request (100 by default). */
  limit?: number;
}

/** Where a watch is: opening its first connection, caught up and live, or connecting again after one ended. */
export type WatchStatus = "connecting" | "live" | "reconnecting";

/** What {@link NotesClient.watchChanges} takes. */
export interface WatchChangesOptions {
  /**
   * Where to start: the `cursor` of `listChanges`/`syncNotes`, or one this watch gave before. Without it the watch
   * starts at the end of the feed: only changes made from then on.
   */
  since?: string;
  /**
   * Called with each change, in order, and the cursor just after it (keep it to resume from there). When it
   * answers a promise, the next change waits for it.
   */
  onChange: (change: NoteChange, cursor: string) => void | Promise<void>;
  /** Called once per connection, when every change missed before it has been given: from then on, live. */
  onReady?: (cursor: string) => void | Promise<void>;
  /**
   * The cursor is older than the deletions the service keeps: the watch has ended. Drop the local copy, sync
   * again without a cursor (`syncNotes()`), and watch again from its cursor.
   */
  onReset?: () => void | Promise<void>;
  /** Called whenever the watch's status changes. */
  onStatus?: (status: WatchStatus) => void;
  /** Ends the watch, and its connection, when it aborts. */
  signal?: AbortSignal;
}

/** An event of the changes stream, its data checked against the contract. */
type ChangeStreamEvent =
  | { kind: "change"; change: NoteChange; cursor: string }
  | { kind: "ready"; cursor: string }
  | { kind: "reset" }
  | { kind: "retry"; ms: number };

/**
 * How long a changes stream may be silent before the watch takes it for
 * lost: three of the service's keep-alives (at least one every 15 s) missed.
 */
const streamSilenceMs = 45_000;

/** Options of {@link NotesClient.createNote}. */
export interface CreateNoteOptions extends RequestOptions {
  /**
   * The create's `Idempotency-Key`; the client makes a fresh one per call when
   * none is given. Give your own to retry a create across app restarts.
   */
  idempotencyKey?: string;
}

/** Options of {@link NotesClient.deleteNote}. */
export interface DeleteNoteOptions extends RequestOptions {
  /** The note's `updatedAt` as last read: a note changed since is kept, and the call throws a 409. */
  expectedUpdatedAt?: string;
}

/** Filters and paging of {@link AdminApi.listUsers}. */
export interface ListUsersOptions extends Pick<ListNotesOptions, "limit" | "offset"> {
  /** Part of the email or name, case-insensitively. */
  query?: string;
  status?: User["status"];
}

/** Paging of security events, newest first: `before` is the last `id` of the page before. */
export interface SecurityEventsOptions {
  /** 1 to 100; 20 by default. */
  limit?: number;
  before?: string;
}

/** What an ADMIN account may call: {@link NotesClient.admin}. Others are answered 403 `admin_required`. */
export interface AdminApi {
  /** One page of accounts, newest first, with their note counts (never their notes). */
  listUsers(options?: ListUsersOptions & RequestOptions): Promise<ManagedUserList>;
  /** Suspends (`SUSPENDED`) or reactivates (`ACTIVE`) an account; answers it as updated. */
  setStatus(id: string, status: User["status"], request?: RequestOptions): Promise<User>;
  /** One page of an account's security events, newest first. */
  events(id: string, options?: SecurityEventsOptions & RequestOptions): Promise<SecurityEvent[]>;
  /**
   * Removes the second factor (and recovery codes) of an account whose user lost both, once you have
   * checked who asks; its sessions end. Throws 404 `factor_not_found` when it has none.
   */
  removeSecondFactor(id: string, request?: RequestOptions): Promise<User>;
}

/**
 * The signed-in user's second factor, an authenticator app (TOTP):
 * {@link NotesClient.mfa}. A code is accepted once, within ±30 s; 5 wrong
 * codes lock the factor for 15 minutes (429 with `retryAfter`), whoever
 * sends them. A session whose `mfaRequired` is true reaches nothing but
 * `verify`, `recover`, `getUser` and a local sign-out until it makes the
 * second step; everything else throws 403 `mfa_required`.
 */
export interface MfaApi {
  /**
   * Starts enrolling, with the password re-entered: answers the pending factor's id, the `otpauthUrl` to show
   * as a QR code and the `secret` to type by hand, both this once. Throws 409 `factor_exists` when the account
   * has an active factor.
   */
  enroll(body: BodyOf<"mfaEnroll">, request?: RequestOptions): Promise<Enrollment>;
  /**
   * Activates the pending factor with its first code. Keeps the new session it answers (every other session
   * of the account has ended) and answers it with the 10 `recoveryCodes`: show them once, they are never
   * shown again. Throws 400 `invalid_code` for a wrong code.
   */
  activate(body: BodyOf<"mfaActivate">, request?: RequestOptions): Promise<Activation>;
  /** The second step of a sign-in whose `mfaRequired` is true: keeps and answers the session it makes. */
  verify(body: BodyOf<"mfaVerify">, request?: RequestOptions): Promise<Session>;
  /**
   * The second step with a recovery code instead (each works once): keeps the session and answers it with
   * `recoveryCodesLeft`.
   */
  recover(body: BodyOf<"mfaRecover">, request?: RequestOptions): Promise<Recovery>;
  /** The account's factors (one active, or one pending) and how many recovery codes remain. */
  list(request?: RequestOptions): Promise<FactorList>;
  /**
   * Removes the factor, with a current code or a recovery code; needs a session that made the second step.
   * Every other session of the account ends; this one is kept.
   */
  unenroll(
    body: { factorId: string; code: string } | { factorId: string; recoveryCode: string },
    request?: RequestOptions,
  ): Promise<void>;
  /**
   * Replaces the recovery codes, with a current code or a recovery code; answers the new ones (show them once).
   * Every other session of the account ends.
   */
  regenerateRecoveryCodes(
    body: { code: string } | { recoveryCode: string },
    request?: RequestOptions,
  ): Promise<string[]>;
}

interface CallInput {
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  headers?: Record<string, string>;
  /** The deadline of the whole call that sends this request. */
  deadline: CallDeadline;
}

/** A 401 that refused the access token itself (expired, revoked, missing or invalid). */
function isTokenRefusal(error: unknown): error is NotesApiError {
  return error instanceof NotesApiError && error.status === 401 &&
    (tokenErrorCodes as readonly string[]).includes(error.code);
}

/** What a call that acts for a signed-in user throws when the client holds no session; nothing is sent. */
function notSignedIn(): NotesApiError {
  return new NotesApiError({ status: 401, code: "not_signed_in", message: "Not signed in" });
}

/**
 * A failure after which a create may or may not have happened and there is
 * time to retry: no answer (but not a deadline passed), or the database
 * unavailable.
 */
function outcomeUnknown(error: unknown): boolean {
  return error instanceof NotesApiError &&
    (error.code === "network_error" || error.status === 503);
}

/** The error of a request that got no answer, or lost it midway: status 0, code `network_error`. */
function unreachable(url: URL, cause: unknown): NotesApiError {
  return new NotesApiError({
    status: 0,
    code: "network_error",
    message: `The notes service could not be reached at ${url.origin}`,
    cause,
  });
}

/**
 * A failure that time may mend, after which a watch connects again: no answer
 * (or none in time, or a connection gone silent), a 5xx, or a 429 (the
 * account has as many streams open as it may: one of them may end).
 */
function worthReconnecting(error: unknown): error is NotesApiError {
  return error instanceof NotesApiError &&
    (error.code === "network_error" || error.code === "timeout" || error.status === 429 || error.status >= 500);
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A failure after which a refresh may have rotated the token: as for a
 * create, or no answer within the request's own time (the refresh has
 * another request's time left).
 */
function refreshOutcomeUnknown(error: unknown): boolean {
  return outcomeUnknown(error) || (error instanceof NotesApiError && error.code === "timeout");
}

/** `Retry-After` in seconds: given as seconds, or as an HTTP date. */
function retryAfterOf(response: Response): number | undefined {
  const header = response.headers.get("retry-after");
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

function failure(
  spec: OperationSpec,
  response: Response,
  payload: unknown,
): NotesApiError {
  const common = {
    status: response.status,
    requestId: response.headers.get("x-request-id") ?? undefined,
    retryAfter: retryAfterOf(response),
  };
  if (spec.envelope === "auth") {
    const parsed = authErrorEnvelope.safeParse(payload);
    if (parsed.success) {
      return new NotesApiError({
        ...common,
        code: parsed.data.code,
        message: parsed.data.message,
        envelope: parsed.data,
      });
    }
  } else {
    const parsed = notesErrorEnvelope.safeParse(payload);
    if (parsed.success) {
      return new NotesApiError({
        ...common,
        code: parsed.data.code,
        message: parsed.data.error,
        envelope: parsed.data,
      });
    }
  }
  // An envelope with a code this client does not know (from a newer server) still keeps the server's words.
  const words = (payload as Record<string, unknown> | null)?.[spec.envelope === "auth" ? "message" : "error"];
  return new NotesApiError({
    ...common,
    code: "unexpected_response",
    message: typeof words === "string" ? words : `Request failed with status ${response.status}`,
  });
}

/** The client itself; create one with {@link createNotesClient}. */
export class NotesClient {
  readonly #base: string;
  readonly #anonKey: string;
  readonly #fetch: typeof globalThis.fetch;
  readonly #onUnauthorized: ((error: NotesApiError) => void) | undefined;
  readonly #storage: SessionStorage;
  readonly #refreshMarginMs: number;
  readonly #timeoutMs: number;
  readonly #navigation: BrowserNavigation | undefined;
  /** How long each request of a refresh may take: the budget's, or a share of a shorter `timeoutMs`. */
  readonly #refreshAttemptMs: number;
  readonly #listeners = new Set<SessionListener>();
  readonly #tabs: TabCoordinator | undefined;
  /** The refresh under way in this client, which concurrent calls wait for. */
  #refreshing: Promise<Session> | undefined;
  /**
   * The last session a refresh answered 401 ended here, and that answer: a
   * call of that session whose own 401 comes later throws it too.
   */
  #lastEnded: { refreshToken: string; error: NotesApiError } | undefined;

  constructor(options: NotesClientOptions) {
    this.#base = options.url.replace(/\/+$/, "");
    this.#anonKey = options.anonKey;
    // Called through a closure: a bare reference to window.fetch throws "Illegal invocation" in browsers.
    this.#fetch = options.fetch ??
      ((input, init) => globalThis.fetch(input, init));
    this.#onUnauthorized = options.onUnauthorized;
    this.#storage = options.storage ?? memorySessionStorage();
    this.#refreshMarginMs = (options.refreshMarginSeconds ?? 60) * 1000;
    this.#timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
    this.#navigation = options.navigation ?? pageNavigation();
    this.#refreshAttemptMs = Math.min(refreshAttemptMs, this.#timeoutMs / refreshAttempts);
    const shared = this.#storage.sharedBy;
    this.#tabs = shared && typeof BroadcastChannel === "function"
      ? new TabCoordinator(shared, (message) => this.#heardFromTab(message))
      : undefined;
  }

  /** The session in use, if signed in: read from the storage, so another tab's refresh or sign-out shows here. */
  get session(): Session | undefined {
    return this.#storage.load();
  }

  /** The access token in use, exactly as the API issued it (`"Bearer <jwt>"`), if signed in. */
  get accessToken(): string | undefined {
    return this.session?.accessToken;
  }

  /** When the access token in use expires, if signed in. */
  get expiresAt(): Date | undefined {
    const expiresAt = this.session?.expiresAt;
    return expiresAt === undefined ? undefined : new Date(expiresAt);
  }

  /** Uses `session` (e.g. one an app kept elsewhere) from now on, or forgets the session when undefined. */
  setSession(session: Session | undefined): void {
    this.#storage.save(session);
    for (const listener of this.#listeners) listener(session);
  }

  /** Calls `listener` after every change of the session; answers a function that stops it. */
  onSessionChange(listener: SessionListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Trades the refresh token for a new session now. Concurrent callers (and
   * tabs sharing the storage) share one refresh: a request, and one retry if
   * its answer is lost or a 503. A 401 ends the session (`onUnauthorized` is called);
   * any other failure keeps it and throws. A caller whose `timeoutMs` passes
   * or whose `signal` aborts stops waiting; the shared refresh runs on for the
   * others, within the client's `timeoutMs`.
   */
  refreshSession(request: RequestOptions = {}): Promise<Session> {
    return this.#deadline(request).race(this.#sharedRefresh());
  }

  /**
   * Signs out on the server: `local` (the default) ends this session,
   * `others` every other session of the account, `global` all of them. This
   * client forgets its session for `local` and `global` even when the server
   * cannot be reached, so a user who signs out is signed out here.
   */
  async signOut(options: { scope?: LogoutScope } & RequestOptions = {}): Promise<void> {
    const scope = options.scope ?? "local";
    const ending = this.session;
    try {
      if (ending) await this.#call("signOut", { body: { scope }, deadline: this.#deadline(options) });
    } finally {
      if (ending && scope !== "others") this.#forget(ending);
    }
  }

  /** The account's live sessions, this one marked `current`. */
  async listSessions(request: RequestOptions = {}): Promise<SessionInfo[]> {
    return ((await this.#call("listSessions", { deadline: this.#deadline(request) })) as {
      sessions: SessionInfo[];
    }).sessions;
  }

  /** Ends one session of the account (another device, or this one). */
  async revokeSession(id: string, request: RequestOptions = {}): Promise<EndedSession> {
    return await this.#call("revokeSession", { query: { id }, deadline: this.#deadline(request) }) as EndedSession;
  }

  /** The signed-in user, as the server has it now. */
  async getUser(request: RequestOptions = {}): Promise<User> {
    return ((await this.#call("getUser", { deadline: this.#deadline(request) })) as { payload: User }).payload;
  }

  /** The signed-in user's own security events (sign-ins, password changes, sessions), newest first. */
  async securityEvents(options: SecurityEventsOptions & RequestOptions = {}): Promise<SecurityEvent[]> {
    const { limit, before } = options;
    const deadline = this.#deadline(options);
    return ((await this.#call("listSecurityEvents", { query: { limit, before }, deadline })) as {
      events: SecurityEvent[];
    }).events;
  }

  /** The admin API, for a signed-in ADMIN account. */
  readonly admin: AdminApi = {
    listUsers: async (options = {}) => {
      const { query, status, limit, offset } = options;
      const deadline = this.#deadline(options);
      return await this.#call("listUsers", { query: { query, status, limit, offset }, deadline }) as ManagedUserList;
    },
    setStatus: async (id, status, request = {}) =>
      ((await this.#call("setUserStatus", { body: { id, status }, deadline: this.#deadline(request) })) as {
        payload: User;
      }).payload,
    events: async (id, options = {}) => {
      const { limit, before } = options;
      const deadline = this.#deadline(options);
      return ((await this.#call("listAccountEvents", { query: { id, limit, before }, deadline })) as {
        events: SecurityEvent[];
      }).events;
    },
    removeSecondFactor: async (id, request = {}) =>
      ((await this.#call("setUserStatus", { body: { id, removeMfa: true }, deadline: this.#deadline(request) })) as {
        payload: User;
      }).payload,
  };

  /** The second factor of the signed-in user. */
  readonly mfa: MfaApi = {
    enroll: async (body, request = {}) =>
      await this.#call("mfaEnroll", { body, deadline: this.#deadline(request) }) as Enrollment,
    activate: async (body, request = {}) => {
      const activation = await this.#call("mfaActivate", { body, deadline: this.#deadline(request) }) as Activation;
      const { recoveryCodes: _shownOnce, ...session } = activation;
      this.#keep(session);
      return activation;
    },
    verify: async (body, request = {}) =>
      this.#keep(await this.#call("mfaVerify", { body, deadline: this.#deadline(request) }) as Session),
    recover: async (body, request = {}) => {
      const recovery = await this.#call("mfaRecover", { body, deadline: this.#deadline(request) }) as Recovery;
      const { recoveryCodesLeft: _left, ...session } = recovery;
      this.#keep(session);
      return recovery;
    },
    list: async (request = {}) => await this.#call("mfaList", { deadline: this.#deadline(request) }) as FactorList,
    unenroll: async (body, request = {}) => {
      await this.#call("mfaUnenroll", { body, deadline: this.#deadline(request) });
    },
    regenerateRecoveryCodes: async (body, request = {}) =>
      ((await this.#call("mfaRecoveryCodes", { body, deadline: this.#deadline(request) })) as {
        recoveryCodes: string[];
      }).recoveryCodes,
  };

  /**
   * The URL that starts a sign-in with `provider` (`GET /auth/oauth/authorize`): a browser navigation, with no
   * key and no token, so it can also be a link's `href` (opened in this tab). It makes a new PKCE verifier, which
   * the page keeps (`navigation.saveVerifier`), and carries its challenge: the code the browser comes back with
   * is exchanged only with that verifier, so only this tab can finish the sign-in. After the provider, the
   * browser comes back to `redirectTo`, where {@link completeProviderSignIn} finishes. Throws where the client
   * has no page (give `navigation`).
   */
  async providerSignInUrl({ provider, redirectTo }: ProviderRedirect): Promise<string> {
    const page = this.#page();
    const verifier = generateRandomCodeVerifier();
    const url = new URL(`${this.#base}${pathOf(operations.oauthAuthorize)}`);
    url.searchParams.set("provider", provider);
    url.searchParams.set("redirect_to", redirectTo);
    url.searchParams.set("code_challenge", await calculatePKCECodeChallenge(verifier));
    url.searchParams.set("code_challenge_method", "S256");
    page.saveVerifier(verifier);
    return url.href;
  }

  /**
   * Starts a sign-in with `provider`: leaves the page for the service, which sends the browser on to the
   * provider (`navigation.assign` of {@link providerSignInUrl}). Nothing is sent from here, and nothing comes
   * back to this page: the browser returns to `redirectTo`. A provider that is not configured, or a `redirectTo`
   * the service does not list, is answered there as a JSON 400. Throws, leaving the page as it is, where the
   * client has no page to navigate (give `navigation`).
   */
  async signInWithProvider(redirect: ProviderRedirect): Promise<void> {
    const url = await this.providerSignInUrl(redirect);
    this.#page().assign(url);
  }

  /**
   * Finishes a provider sign-in or link on the page the browser came back to: reads `code`, `link_code`, `linked`
   * or `error` from the page's URL (or from `url`, when given), removes them from the page's URL at once (so a reload or a
   * shared link never carries the one-time code), and for a code exchanges it with the verifier the page kept
   * (`POST /auth/oauth/token`, valid 60 seconds, once) and keeps the session as login does; for a link code,
   * completes the link with this client's session (`POST /auth/identities/link/complete`). Call it once when the
   * app starts. Throws the exchange's {@link NotesApiError} (400 `invalid_code` for a code spent, expired, of a
   * suspended account, or started in another tab or browser: start the sign-in again), or the completion's (400
   * `invalid_code`, 409 `identity_already_linked`; `not_signed_in` without a session).
   */
  async completeProviderSignIn(
    options: { url?: string } & RequestOptions = {},
  ): Promise<ProviderSignInResult> {
    const href = options.url ?? this.#navigation?.url();
    if (href === undefined) return { outcome: "none" };
    const url = new URL(href);
    const found = Object.fromEntries(providerReturnParameters.map((name) => [name, url.searchParams.get(name)]));
    if (
      found.code === null && found.link_code === null && found.linked === null && found.reauthenticated === null &&
      found.error === null
    ) {
      return { outcome: "none" };
    }
    if (options.url === undefined) {
      for (const name of providerReturnParameters) url.searchParams.delete(name);
      this.#navigation?.replace(url.href);
    }
    if (found.error !== null) {
      return { outcome: "error", error: found.error, description: found.error_description ?? undefined };
    }
    if (found.linked !== null) return { outcome: "linked", provider: found.linked, identity: undefined };
    if (found.reauthenticated !== null) return { outcome: "reauthenticated", provider: found.reauthenticated };
    if (found.link_code !== null) {
      // Only the session that asked for the link can complete it: this client's.
      const identity = await this.#call("completeLink", {
        body: { code: found.link_code },
        deadline: this.#deadline(options),
      }) as Identity;
      return { outcome: "linked", provider: identity.provider, identity };
    }
    // The verifier serves one exchange, whatever its answer.
    const codeVerifier = this.#navigation?.loadVerifier();
    this.#navigation?.saveVerifier(undefined);
    // No sign-in was started in this tab: the code is someone else's (an attacker's link, to sign this browser in
    // to their account), and is not sent.
    if (codeVerifier === undefined) {
      return { outcome: "error", error: notStartedHere, description: "No sign-in was started here; start it again" };
    }
    const session = this.#keep(
      await this.#call("oauthToken", {
        body: { code: found.code, codeVerifier },
        deadline: this.#deadline(options),
      }) as Session,
    );
    return { outcome: "signed_in", session, mfaRequired: session.mfaRequired };
  }

  /** The providers the signed-in account can sign in with, and whether it has a password too. */
  async listIdentities(request: RequestOptions = {}): Promise<IdentityList> {
    return await this.#call("listIdentities", { deadline: this.#deadline(request) }) as IdentityList;
  }

  /**
   * Starts linking `provider` to the signed-in account; answers the URL to send the browser to (this service's
   * step that binds the link to the browser, then the provider; good for 10 minutes, once), and
   * with `navigate: true` also leaves the page for it. After the provider, the browser comes back to
   * `redirectTo` with a `link_code` (or an error), which {@link completeProviderSignIn} sends from this session to
   * complete the link. `password` is needed unless this session gave a proof within the last 5 minutes
   * ({@link reauthenticate}, {@link reauthenticateWithProvider}): without it the call throws a 400 naming
   * `password` (ask for it, call again); a wrong one is 401 `invalid_credentials`.
   */
  async linkIdentity(
    body: BodyOf<"linkIdentity">,
    options: { navigate?: boolean } & RequestOptions = {},
  ): Promise<IdentityLinkStart> {
    // Checked before the call: a link started here must be able to leave the page.
    const page = options.navigate ? this.#page() : undefined;
    const start = await this.#call("linkIdentity", { body, deadline: this.#deadline(options) }) as IdentityLinkStart;
    page?.assign(start.url);
    return start;
  }

  /**
   * Proves the signed-in owner is at the keyboard (`POST /auth/reauthenticate`) with the password, a current code
   * of the authenticator, or a recovery code: for 5 minutes this session may then unlink an identity, link one
   * without the password, and (an account without a password) set one or delete the account. Answers until when.
   * Throws 401 `invalid_credentials` for a wrong password, 400 `invalid_code` for a wrong code.
   */
  async reauthenticate(
    proof: { password: string } | { code: string } | { recoveryCode: string },
    request: RequestOptions = {},
  ): Promise<Reauthentication> {
    return await this.#call("reauthenticate", { body: proof, deadline: this.#deadline(request) }) as Reauthentication;
  }

  /**
   * The proof of an account that signs in with a provider (`POST /auth/reauthenticate/provider`): answers the
   * provider's URL, where the person signs in again whatever session the provider holds, and with
   * `navigate: true` leaves the page for it. The browser comes back to `redirectTo` with `reauthenticated`, which
   * {@link completeProviderSignIn} reads; the session may then change how the account signs in for 5 minutes.
   * Throws 404 `identity_not_found` when no identity of `provider` is linked to the account.
   */
  async reauthenticateWithProvider(
    body: BodyOf<"reauthenticateWithProvider">,
    options: { navigate?: boolean } & RequestOptions = {},
  ): Promise<IdentityLinkStart> {
    const page = options.navigate ? this.#page() : undefined;
    const start = await this.#call("reauthenticateWithProvider", {
      body,
      deadline: this.#deadline(options),
    }) as IdentityLinkStart;
    page?.assign(start.url);
    return start;
  }

  /**
   * Unlinks one of the account's identities (`id` of {@link listIdentities}), from a session that proved its
   * owner within 5 minutes ({@link reauthenticate}; else 403 `reauthentication_required`). Throws 409
   * `last_sign_in_method` when it is the account's only way to sign in, and 404 `identity_not_found` for an id
   * that is none of its.
   */
  async unlinkIdentity(id: string, request: RequestOptions = {}): Promise<UnlinkedIdentity> {
    return await this.#call("unlinkIdentity", { query: { id }, deadline: this.#deadline(request) }) as UnlinkedIdentity;
  }

  /** Creates an account and keeps its session. */
  async register(body: BodyOf<"register">, request: RequestOptions = {}): Promise<Session> {
    return this.#keep(await this.#call("register", { body, deadline: this.#deadline(request) }) as Session);
  }

  /** Logs in, sending this device's token when it has one, and keeps the session. */
  async login(body: BodyOf<"login">, request: RequestOptions = {}): Promise<Session> {
    const deviceToken = body.deviceToken ?? this.#storage.loadDeviceToken();
    return this.#keep(
      await this.#call("login", { body: { ...body, deviceToken }, deadline: this.#deadline(request) }) as Session,
    );
  }

  /** Asks for a reset code to be mailed; answers the API's message, which is the same for every email. */
  async requestPasswordReset(
    body: BodyOf<"requestPasswordReset">,
    request: RequestOptions = {},
  ): Promise<string> {
    return (await this.#send("requestPasswordReset", { body, deadline: this.#deadline(request) }, undefined))
      .message;
  }

  /** Sets a new password with a reset code and keeps the new session (every other one has ended). */
  async createPassword(body: BodyOf<"createPassword">, request: RequestOptions = {}): Promise<Session> {
    return this.#keep(await this.#call("createPassword", { body, deadline: this.#deadline(request) }) as Session);
  }

  /**
   * Verifies the address with the code mailed at sign-up, and keeps the session it answers. It sends the
   * session's token when the client holds one (the app the account signed up in); otherwise give `password`.
   */
  async verifyEmail(body: BodyOf<"verifyEmail">, request: RequestOptions = {}): Promise<Session> {
    return this.#keep(await this.#call("verifyEmail", { body, deadline: this.#deadline(request) }) as Session);
  }

  /** Asks for a new verification code; answers the API's message, which is the same for every address. */
  async resendVerification(
    body: BodyOf<"resendVerification">,
    request: RequestOptions = {},
  ): Promise<string> {
    return (await this.#send("resendVerification", { body, deadline: this.#deadline(request) }, undefined))
      .message;
  }

  /** Changes the password and keeps the fresh session it answers; every other session of the account ends. */
  async changePassword(body: BodyOf<"changePassword">, request: RequestOptions = {}): Promise<Session> {
    return this.#keep(await this.#call("changePassword", { body, deadline: this.#deadline(request) }) as Session);
  }

  /** Deletes the account with everything it owns (the password re-entered), and forgets the session. */
  async deleteAccount(body: BodyOf<"deleteAccount">, request: RequestOptions = {}): Promise<void> {
    const ending = this.session;
    await this.#call("deleteAccount", { body, deadline: this.#deadline(request) });
    if (ending) this.#forget(ending);
  }

  /**
   * Creates a note of the signed-in user. Each call sends an `Idempotency-Key`
   * and, after a 503 or no answer at all (the note may or may not have been
   * made), retries once with the same key, so a retry never makes it twice.
   * The retry spends what is left of the call's deadline; after a `timeout`
   * there is none left, so it is not retried: call again with the same
   * `idempotencyKey` to learn whether the note was made.
   */
  async createNote(
    body: BodyOf<"createNote">,
    options: CreateNoteOptions = {},
  ): Promise<Note> {
    const headers = {
      [idempotencyKeyHeader]: options.idempotencyKey ?? crypto.randomUUID(),
    };
    const deadline = this.#deadline(options);
    try {
      return await this.#call("createNote", { body, headers, deadline }) as Note;
    } catch (error) {
      if (!outcomeUnknown(error)) throw error;
      return await this.#call("createNote", { body, headers, deadline }) as Note;
    }
  }

  /** One of the signed-in user's notes, as it is stored now. */
  async getNote(id: string, request: RequestOptions = {}): Promise<Note> {
    return await this.#call("getNote", { query: { id }, deadline: this.#deadline(request) }) as Note;
  }

  /** One page of the signed-in user's notes that match the filters given, newest first. */
  async listNotes(options: ListNotesOptions & RequestOptions = {}): Promise<NoteList> {
    const { limit, offset, status, q, order } = options;
    return await this.#call("listNotes", {
      query: { limit, offset, status, q, order },
      deadline: this.#deadline(options),
    }) as NoteList;
  }

  /** The signed-in user's notes that hold every word of `q`, newest first: {@link listNotes} with `q`. */
  async search(
    q: string,
    options: Omit<ListNotesOptions, "q"> & RequestOptions = {},
  ): Promise<NoteList> {
    return await this.listNotes({ ...options, q });
  }

  /**
   * One page of the changes feed: the notes changed after `since` as they are
   * now, and tombstones (`{ id, deleted: true }`) of those deleted since. A
   * cursor too old for the deletions kept throws a {@link NotesApiError}
   * with status 410 and `code` `cursor_expired`: drop the local copy and
   * start again without `since`.
   */
  async listChanges(options: ListChangesOptions & RequestOptions = {}): Promise<ChangeList> {
    return await this.#call("listChanges", {
      query: { since: options.since, limit: options.limit },
      deadline: this.#deadline(options),
    }) as ChangeList;
  }

  /**
   * Every page of the changes feed after `cursor` (every current note without
   * one), one request per page, until `hasMore` is false. Apply each page's
   * `changes` in order and keep its `cursor`; the next sync starts from the
   * last one kept, and nothing written meanwhile is skipped. Each page's
   * request has a deadline of its own (`timeoutMs`).
   *
   * @example
   * ```ts
   * for await (const page of client.syncNotes(localStorage.getItem("cursor") ?? undefined)) {
   *   for (const change of page.changes) "deleted" in change ? copy.delete(change.id) : copy.set(change.id, change);
   *   localStorage.setItem("cursor", page.cursor);
   * }
   * ```
   */
  async *syncNotes(
    cursor?: string,
    options: Pick<ListChangesOptions, "limit"> & RequestOptions = {},
  ): AsyncGenerator<ChangeList, void, undefined> {
    let since = cursor;
    for (;;) {
      const page = await this.listChanges({ ...options, since });
      yield page;
      if (!page.hasMore) return;
      since = page.cursor;
    }
  }

  /**
   * Watches the signed-in user's notes change, live, over `GET /notes-stream`
   * (server-sent events read through `fetch`, so the token travels in a
   * header, never in a URL): `onChange` gets each change after `since` in
   * order, then `onReady` once caught up, then each change as it happens.
   *
   * The watch outlives any one connection: whenever the stream ends (the
   * service ends each after a while, and when the access token expires) or
   * the network fails, it connects again after the service's `retry`, or
   * after a growing wait when it failed (0.5 s doubling to 30 s, with
   * jitter; `Retry-After` on a 503), resuming after the last cursor, so no
   * change is lost or given twice. A refused token is refreshed as for any
   * call. It answers when `signal` aborts, or after `onReset` (the cursor
   * has expired: sync again from the start). It throws, and stops, when the
   * session has ended (a refresh answered 401: `onUnauthorized` was called),
   * when there is none (`not_signed_in`), on a 400 (`invalid_cursor`) or 403,
   * on an answer outside the contract, or with what `onChange` throws.
   *
   * @example
   * ```ts
   * const stop = new AbortController();
   * void client.watchChanges({
   *   since: cursor,
   *   onChange: (change, next) => {
   *     "deleted" in change ? copy.delete(change.id) : copy.set(change.id, change);
   *     cursor = next;
   *   },
   *   onReset: () => resyncFromScratch(),
   *   signal: stop.signal,
   * });
   * ```
   */
  async watchChanges(options: WatchChangesOptions): Promise<void> {
    const { signal } = options;
    let cursor = options.since;
    // Failed attempts since the stream was last live, and the wait before the next attempt.
    let failures = 0;
    let waitMs = 0;
    for (let attempt = 0; !signal?.aborted; attempt++) {
      if (waitMs > 0) await pause(waitMs, signal);
      if (signal?.aborted) return;
      options.onStatus?.(attempt === 0 ? "connecting" : "reconnecting");
      // Ends this connection: when the watch is stopped, and once it is done with it, however that happened.
      const connection = new AbortController();
      const stop = () => connection.abort();
      signal?.addEventListener("abort", stop, { once: true });
      const events = this.#changeStream(options.since, cursor, connection.signal, signal);
      let retryMs: number | undefined;
      try {
        for (;;) {
          let next: IteratorResult<ChangeStreamEvent, void>;
          try {
            next = await events.next();
          } catch (error) {
            if (signal?.aborted) return;
            if (!worthReconnecting(error)) throw error;
            const retryAfterMs = error.retryAfter === undefined ? undefined : error.retryAfter * 1000;
            waitMs = retryAfterMs ?? backoffMs(failures++);
            break;
          }
          if (next.done) {
            // An end the service planned says when to come back; any other is a failure.
            waitMs = retryMs ?? backoffMs(failures++);
            break;
          }
          const event = next.value;
          if (event.kind === "retry") {
            retryMs = event.ms;
          } else if (event.kind === "change") {
            await options.onChange(event.change, event.cursor);
            cursor = event.cursor;
          } else if (event.kind === "ready") {
            cursor = event.cursor;
            failures = 0;
            options.onStatus?.("live");
            await options.onReady?.(event.cursor);
          } else {
            await options.onReset?.();
            return;
          }
        }
      } finally {
        signal?.removeEventListener("abort", stop);
        connection.abort();
        await events.return();
      }
    }
  }

  /**
   * Changes the given fields of a note and answers the updated note. With
   * `expectedUpdatedAt`, a note changed since throws a {@link NotesApiError}
   * with status 409, `code` `note_conflict` and the stored note as `note`.
   */
  async saveNote(body: BodyOf<"saveNote">, request: RequestOptions = {}): Promise<Note> {
    return await this.#call("saveNote", { body, deadline: this.#deadline(request) }) as Note;
  }

  /** Deletes a note and answers its id; with `expectedUpdatedAt`, only while the note has that version. */
  async deleteNote(
    id: string,
    options: DeleteNoteOptions = {},
  ): Promise<DeletedNote> {
    return await this.#call("deleteNote", {
      query: { id, expectedUpdatedAt: options.expectedUpdatedAt },
      deadline: this.#deadline(options),
    }) as DeletedNote;
  }

  /**
   * Every page of the signed-in user's notes, one request per page, until
   * `hasMore` is false. Notes created or deleted meanwhile shift the pages,
   * as offset paging does. Each page's request has a deadline of its own.
   */
  async *notePages(
    options: Pick<ListNotesOptions, "limit"> & RequestOptions = {},
  ): AsyncGenerator<NoteList, void, undefined> {
    let offset = 0;
    for (;;) {
      const page = await this.listNotes({ ...options, offset });
      yield page;
      if (!page.pagination.hasMore || page.notes.length === 0) return;
      offset += page.notes.length;
    }
  }

  /** The page to navigate, or an error saying that the client has none. */
  #page(): BrowserNavigation {
    if (this.#navigation) return this.#navigation;
    throw new Error("This client has no page to navigate: create it with a `navigation`");
  }

  /** Keeps `session`, and the device token that login and register answer, which outlives it. */
  #keep(session: Session): Session {
    const { deviceToken, ...kept } = session;
    if (deviceToken) this.#storage.saveDeviceToken(deviceToken);
    this.setSession(kept);
    return session;
  }

  /** The deadline of one call: the call's own `timeoutMs`, else the client's, and the call's `signal`. */
  #deadline(request: RequestOptions = {}): CallDeadline {
    return new CallDeadline(request.timeoutMs ?? this.#timeoutMs, request.signal);
  }

  /**
   * The refresh under way, or a new one. It is shared by calls with deadlines
   * of their own, so it runs on the client's `timeoutMs` (shared by its
   * request and retry), never a call's (a call that cannot wait for it stops
   * waiting, and the others still get it).
   */
  #sharedRefresh(): Promise<Session> {
    this.#refreshing ??= this.#refresh().finally(() => {
      this.#refreshing = undefined;
    });
    return this.#refreshing;
  }

  async #refresh(): Promise<Session> {
    const current = this.session;
    if (!current) throw notSignedIn();
    const body = { refreshToken: current.refreshToken };
    const refresh = async () => {
      for (let attempt = 1;; attempt++) {
        // Another tab may have refreshed this session already: its result is in the shared storage.
        const stored = this.session;
        if (stored && stored.refreshToken !== current.refreshToken) return stored;
        const deadline = new CallDeadline(this.#refreshAttemptMs);
        try {
          return (await this.#send("refreshSession", { body, deadline }, undefined)).data as Session;
        } catch (error) {
          // The token may be rotated and its successor lost with the answer: the server answers that same
          // successor to this token again, but only within its grace, so the retry goes now, not on a later call.
          if (attempt === refreshAttempts || !refreshOutcomeUnknown(error)) throw error;
        }
      }
    };
    try {
      const session = this.#tabs ? await this.#tabs.refreshOnce(current.refreshToken, refresh) : await refresh();
      // Kept only if no login or sign-out replaced the session meanwhile.
      if (this.session?.refreshToken === current.refreshToken) {
        this.setSession(session);
      }
      return session;
    } catch (error) {
      if (error instanceof NotesApiError && error.status === 401) {
        this.#ended(current, error);
      }
      throw error;
    }
  }

  /**
   * Drops `ending` if it is still the session in use (a login may have
   * replaced it meanwhile) and tells the other tabs; answers whether it did.
   */
  #forget(ending: Session): boolean {
    if (this.session?.refreshToken !== ending.refreshToken) return false;
    this.setSession(undefined);
    this.#tabs?.announce({ type: "ended", token: ending.refreshToken });
    return true;
  }

  /** The session ended on the server (a refresh answered 401): drops it and tells the app. */
  #ended(ending: Session, error: NotesApiError): void {
    if (!this.#forget(ending)) return;
    this.#lastEnded = { refreshToken: ending.refreshToken, error };
    this.#onUnauthorized?.(error);
  }

  #heardFromTab(message: TabMessage): void {
    // The storage is shared, so it already holds what the other tab wrote; tell this tab's listeners.
    if (message.type === "refreshed" || message.type === "ended") {
      for (const listener of this.#listeners) listener(this.session);
    }
  }

  /**
   * Calls `name` with the session's access token when the operation takes
   * one (see {@link #signedIn}); answers the success envelope's `data`.
   */
  async #call(name: JsonOperationName, input: CallInput): Promise<unknown> {
    const spec: OperationSpec = operations[name];
    if (spec.envelope === "auth" && (!spec.bearer || (spec.bearer === "optional" && !this.session))) {
      return (await this.#send(name, input, undefined)).data;
    }
    return (await this.#signedIn(input.deadline, (accessToken) => this.#send(name, input, accessToken))).data;
  }

  /**
   * Sends `request` with the session's access token, refreshing it first
   * when it is about to expire, and once more after a 401, then sending it
   * again; all within `deadline`.
   */
  async #signedIn<T>(deadline: CallDeadline, request: (accessToken: string) => Promise<T>): Promise<T> {
    // Every other operation acts for a signed-in user: without a session there is nothing worth sending.
    let session = this.session;
    if (!session) throw notSignedIn();
    if (Date.parse(session.expiresAt) - Date.now() < this.#refreshMarginMs) {
      // Ahead of expiry; if the refresh fails for now (offline, 5xx, too slow), the current token may still do. A
      // refresh answered 401 has ended the session: the call throws that answer, as onUnauthorized was given it.
      session = await deadline.race(this.#sharedRefresh()).catch((refreshError: unknown) => {
        const now = this.session;
        if (now) return now;
        throw refreshError instanceof NotesApiError && refreshError.status === 401 ? refreshError : notSignedIn();
      });
    }
    try {
      return await request(session.accessToken);
    } catch (error) {
      // Only a refused token calls for a refresh; a wrong password re-entered (invalid_credentials) does not.
      if (!isTokenRefusal(error)) throw error;
      const now = this.session;
      if (!now) {
        // Dropped meanwhile: by a refresh answered 401 (another call's), whose answer this call throws too, or by
        // a sign-out.
        throw this.#lastEnded?.refreshToken === session.refreshToken ? this.#lastEnded.error : error;
      }
      // Refreshed meanwhile (another call, another tab): retry with that; else refresh once. A refresh answered
      // 401 has ended the session, and the call throws that answer, the error onUnauthorized was given.
      const renewed = now.refreshToken !== session.refreshToken ? now : await deadline.race(this.#sharedRefresh());
      return await request(renewed.accessToken);
    }
  }

  /**
   * Sends one request of `name`, unless the call's deadline has passed:
   * answers its success envelope, checked against the contract, or throws the
   * API's error, or the deadline's once it passes.
   */
  async #send(
    name: JsonOperationName,
    { body, query = {}, headers: extraHeaders = {}, deadline }: CallInput,
    accessToken: string | undefined,
  ): Promise<{ message: string; data: unknown }> {
    // Nothing more is sent once the time is up, whatever the fetch given does with an aborted signal.
    if (deadline.signal.aborted) throw deadline.error();
    const spec = operations[name];
    const url = new URL(`${this.#base}${pathOf(spec)}`);
    for (const [parameter, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(parameter, String(value));
    }
    const headers: Record<string, string> = {
      apikey: this.#anonKey,
      ...extraHeaders,
    };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (accessToken) headers.Authorization = bearer(accessToken);
    const { response, payload } = await this.#exchange(url, {
      method: spec.method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    }, deadline);
    if (!response.ok) throw failure(spec, response, payload);
    const envelope = spec.envelope === "auth"
      ? authSuccessEnvelope(spec.success.data)
      : notesSuccessEnvelope(spec.success.data);
    const parsed = envelope.safeParse(payload);
    if (!parsed.success) {
      throw new NotesApiError({
        status: response.status,
        code: "unexpected_response",
        message: `The ${name} response does not match the API contract`,
        requestId: response.headers.get("x-request-id") ?? undefined,
        cause: parsed.error,
      });
    }
    return parsed.data;
  }

  /**
   * One connection of the changes stream, from `since` or after
   * `lastEventId`: its events, in order, until it ends. Opening it has the
   * client's `timeoutMs` and refreshes the token as any call does; after
   * that only `connection` ends it. Throws as `#send` does, and status 0
   * (`network_error`, or `timeout` once silent too long) when it is lost.
   */
  async *#changeStream(
    since: string | undefined,
    lastEventId: string | undefined,
    connection: AbortSignal,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<ChangeStreamEvent, void, undefined> {
    const spec = operations.streamChanges;
    const url = new URL(`${this.#base}${pathOf(spec)}`);
    if (since !== undefined) url.searchParams.set("since", since);
    const deadline = this.#deadline({ signal });
    const response = await this.#signedIn(deadline, async (accessToken) => {
      if (deadline.signal.aborted) throw deadline.error();
      const headers: Record<string, string> = {
        apikey: this.#anonKey,
        Authorization: bearer(accessToken),
        Accept: "text/event-stream",
      };
      // What EventSource sends when it reconnects; it wins over the `since` of the URL.
      if (lastEventId !== undefined) headers[lastEventIdHeader] = lastEventId;
      let response: Response;
      try {
        response = await deadline.race(this.#fetch(url, { headers, signal: connection }));
      } catch (cause) {
        if (deadline.signal.aborted) throw deadline.error();
        throw unreachable(url, cause);
      }
      if (!response.ok) throw failure(spec, response, await readJson(response).catch(() => undefined));
      return response;
    });
    const unexpected = (message: string, cause?: unknown) =>
      new NotesApiError({
        status: response.status,
        code: "unexpected_response",
        message,
        requestId: response.headers.get("x-request-id") ?? undefined,
        cause,
      });
    if (!response.body || !response.headers.get("content-type")?.startsWith("text/event-stream")) {
      throw unexpected("The streamChanges response is not an event stream");
    }
    try {
      for await (const field of eventStreamFields(response.body, streamSilenceMs)) {
        if (field.kind === "retry") {
          yield field;
          continue;
        }
        const { event, id, data } = field.message;
        // Events this client does not know (from a newer service) are skipped, as EventSource skips them.
        if (event !== "change" && event !== "ready" && event !== "reset") continue;
        let json: unknown;
        try {
          json = JSON.parse(data);
        } catch (cause) {
          throw unexpected(`The ${event} event's data is not JSON`, cause);
        }
        if (event === "reset") {
          const reset = streamReset.safeParse(json);
          if (!reset.success) throw unexpected("The reset event does not match the API contract", reset.error);
          yield { kind: "reset" };
          return;
        }
        if (event === "ready") {
          const ready = streamReady.safeParse(json);
          if (!ready.success) throw unexpected("The ready event does not match the API contract", ready.error);
          yield { kind: "ready", cursor: ready.data.cursor };
          continue;
        }
        const change = noteChange.safeParse(json);
        if (!change.success || !id) throw unexpected("A change event does not match the API contract", change.error);
        yield { kind: "change", change: change.data, cursor: id };
      }
    } catch (cause) {
      // The body failed midway: the connection was cut (or went silent, which is already a NotesApiError).
      throw cause instanceof NotesApiError ? cause : unreachable(url, cause);
    }
  }

  /**
   * One request and its whole answer, within `deadline`. Throws status 0:
   * the deadline's code when it passed, else `network_error`.
   */
  async #exchange(
    url: URL,
    init: RequestInit,
    deadline: CallDeadline,
  ): Promise<{ response: Response; payload: unknown }> {
    try {
      return await deadline.race(
        this.#fetch(url, { ...init, signal: deadline.signal })
          .then(async (response) => ({ response, payload: await readJson(response) })),
      );
    } catch (cause) {
      if (deadline.signal.aborted) throw deadline.error();
      // No whole answer came: offline, DNS, refused, TLS, a CORS refusal in a browser, or a connection cut mid-answer.
      throw unreachable(url, cause);
    }
  }
}

/**
 * Creates a client for the functions at `url`.
 *
 * @example
 * ```ts
 * const client = createNotesClient({ url: "https://abc.supabase.co/functions/v1", anonKey: "eyJ..." });
 * ```
 */
export function createNotesClient(options: NotesClientOptions): NotesClient {
  return new NotesClient(options);
}
