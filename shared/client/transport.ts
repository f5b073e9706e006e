/**
 * What every concern of the client shares: the session (kept in the storage, refreshed ahead of expiry and once
 * after a refused token, one refresh at a time across calls and tabs), each call's deadline, and the request
 * that sends an operation and reads its answer, or its failure, against the contract.
 */
import {
  authSuccessEnvelope,
  bearer,
  notesSuccessEnvelope,
  type Session,
} from "../../supabase/functions/_shared/contract/mod.ts";
import { refreshAttemptMs, refreshAttempts } from "../../supabase/functions/_shared/contract/refresh-budget.ts";
import { CallDeadline, defaultTimeoutMs } from "../deadline.ts";
import { NotesApiError } from "../errors.ts";
import { type JsonOperationName, operations, type OperationSpec, pathOf } from "../operations.ts";
import { memorySessionStorage, type SessionStorage } from "../session-storage.ts";
import { TabCoordinator, type TabMessage } from "../tab-coordinator.ts";
import { failure, isTokenRefusal, notSignedIn, readJson, refreshOutcomeUnknown, unreachable } from "./failures.ts";
import { type BrowserNavigation, pageNavigation } from "./navigation.ts";
import type { CallInput, NotesClientOptions, RequestOptions, SessionListener } from "./options.ts";

/** The one transport of a client, which each of its concerns (`auth`, `notes`, `mfa`, ...) calls through. */
export class Transport {
  readonly #base: string;
  readonly anonKey: string;
  readonly fetch: typeof globalThis.fetch;
  readonly #onUnauthorized: ((error: NotesApiError) => void) | undefined;
  readonly storage: SessionStorage;
  readonly #refreshMarginMs: number;
  readonly #timeoutMs: number;
  readonly navigation: BrowserNavigation | undefined;
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
    this.anonKey = options.anonKey;
    // Called through a closure: a bare reference to window.fetch throws "Illegal invocation" in browsers.
    this.fetch = options.fetch ??
      ((input, init) => globalThis.fetch(input, init));
    this.#onUnauthorized = options.onUnauthorized;
    this.storage = options.storage ?? memorySessionStorage();
    this.#refreshMarginMs = (options.refreshMarginSeconds ?? 60) * 1000;
    this.#timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
    this.navigation = options.navigation ?? pageNavigation();
    this.#refreshAttemptMs = Math.min(refreshAttemptMs, this.#timeoutMs / refreshAttempts);
    const shared = this.storage.sharedBy;
    this.#tabs = shared && typeof BroadcastChannel === "function"
      ? new TabCoordinator(shared, (message) => this.#heardFromTab(message))
      : undefined;
  }

  /** The session in use, if signed in: read from the storage, so another tab's refresh or sign-out shows here. */
  get session(): Session | undefined {
    return this.storage.load();
  }

  /** Uses `session` (e.g. one an app kept elsewhere) from now on, or forgets the session when undefined. */
  setSession(session: Session | undefined): void {
    this.storage.save(session);
    for (const listener of this.#listeners) listener(session);
  }

  /** Calls `listener` after every change of the session; answers a function that stops it. */
  onSessionChange(listener: SessionListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
  /** The address of `spec`'s endpoint, without its query. */
  url(spec: OperationSpec): URL {
    return new URL(`${this.#base}${pathOf(spec)}`);
  }

  /** The page to navigate, or an error saying that the client has none. */
  page(): BrowserNavigation {
    if (this.navigation) return this.navigation;
    throw new Error("This client has no page to navigate: create it with a `navigation`");
  }

  /** Keeps `session`, and the device token that login and register answer, which outlives it. */
  keep(session: Session): Session {
    const { deviceToken, ...kept } = session;
    if (deviceToken) this.storage.saveDeviceToken(deviceToken);
    this.setSession(kept);
    return session;
  }

  /** The deadline of one call: the call's own `timeoutMs`, else the client's, and the call's `signal`. */
  deadline(request: RequestOptions = {}): CallDeadline {
    return new CallDeadline(request.timeoutMs ?? this.#timeoutMs, request.signal);
  }

  /**
   * The refresh under way, or a new one. It is shared by calls with deadlines
   * of their own, so it runs on the client's `timeoutMs` (shared by its
   * request and retry), never a call's (a call that cannot wait for it stops
   * waiting, and the others still get it).
   */
  sharedRefresh(): Promise<Session> {
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
          return (await this.send("refreshSession", { body, deadline }, undefined)).data as Session;
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
  forget(ending: Session): boolean {
    if (this.session?.refreshToken !== ending.refreshToken) return false;
    this.setSession(undefined);
    this.#tabs?.announce({ type: "ended", token: ending.refreshToken });
    return true;
  }

  /** The session ended on the server (a refresh answered 401): drops it and tells the app. */
  #ended(ending: Session, error: NotesApiError): void {
    if (!this.forget(ending)) return;
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
   * one (see {@link signedIn}); answers the success envelope's `data`.
   */
  async call(name: JsonOperationName, input: CallInput): Promise<unknown> {
    const spec: OperationSpec = operations[name];
    if (spec.envelope === "auth" && (!spec.bearer || (spec.bearer === "optional" && !this.session))) {
      return (await this.send(name, input, undefined)).data;
    }
    return (await this.signedIn(input.deadline, (accessToken) => this.send(name, input, accessToken))).data;
  }

  /**
   * Sends `request` with the session's access token, refreshing it first
   * when it is about to expire, and once more after a 401, then sending it
   * again; all within `deadline`.
   */
  async signedIn<T>(deadline: CallDeadline, request: (accessToken: string) => Promise<T>): Promise<T> {
    // Every other operation acts for a signed-in user: without a session there is nothing worth sending.
    let session = this.session;
    if (!session) throw notSignedIn();
    if (Date.parse(session.expiresAt) - Date.now() < this.#refreshMarginMs) {
      // Ahead of expiry; if the refresh fails for now (offline, 5xx, too slow), the current token may still do. A
      // refresh answered 401 has ended the session: the call throws that answer, as onUnauthorized was given it.
      session = await deadline.race(this.sharedRefresh()).catch((refreshError: unknown) => {
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
      const renewed = now.refreshToken !== session.refreshToken ? now : await deadline.race(this.sharedRefresh());
      return await request(renewed.accessToken);
    }
  }

  /**
   * Sends one request of `name`, unless the call's deadline has passed:
   * answers its success envelope, checked against the contract, or throws the
   * API's error, or the deadline's once it passes.
   */
  async send(
    name: JsonOperationName,
    { body, query = {}, headers: extraHeaders = {}, deadline }: CallInput,
    accessToken: string | undefined,
  ): Promise<{ message: string; data: unknown }> {
    // Nothing more is sent once the time is up, whatever the fetch given does with an aborted signal.
    if (deadline.signal.aborted) throw deadline.error();
    const spec = operations[name];
    const url = this.url(spec);
    for (const [parameter, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(parameter, String(value));
    }
    const headers: Record<string, string> = {
      apikey: this.anonKey,
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
        this.fetch(url, { ...init, signal: deadline.signal })
          .then(async (response) => ({ response, payload: await readJson(response) })),
      );
    } catch (cause) {
      if (deadline.signal.aborted) throw deadline.error();
      // No whole answer came: offline, DNS, refused, TLS, a CORS refusal in a browser, or a connection cut mid-answer.
      throw unreachable(url, cause);
    }
  }
}
