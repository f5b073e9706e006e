/**
 * A typed client for the notes service. It runs unchanged in browsers, Node
 * (20+) and Deno: it needs only `fetch` and `URL`. Every method answers the
 * `data` of the success envelope, checked against the contract; every failure,
 * an unreachable service included, throws a {@link NotesApiError}.
 *
 * Sessions: login, register and create-password keep the access token and
 * its expiry. There is no refresh token; after `expiresAt` (2 hours) the user
 * logs in again. A notes call answered 401 forgets the token and calls
 * `onUnauthorized`, where an app shows its login screen.
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
  authErrorEnvelope,
  authSuccessEnvelope,
  bearer,
  type DeletedNote,
  type Note,
  type NoteList,
  notesErrorEnvelope,
  notesSuccessEnvelope,
  type Session,
} from "../supabase/functions/_shared/contract.ts";
import { NotesApiError } from "./errors.ts";
import { type OperationName, operations, type OperationSpec } from "./operations.ts";

export interface NotesClientOptions {
  /** The functions' base URL: `https://<project-ref>.supabase.co/functions/v1`, or the one `npm start` prints. */
  url: string;
  /** The project's public key, sent as the `apikey` header. */
  anonKey: string;
  /** A fetch to use instead of the global one (for tests, proxies, or older runtimes). */
  fetch?: typeof globalThis.fetch;
  /** An access token kept from an earlier session, e.g. in localStorage. */
  accessToken?: string;
  /**
   * Called when a notes call is answered 401 (the token expired, was revoked,
   * or is missing or invalid), after the client has forgotten the token and
   * before the call throws. `error.code` says which. Not called when a login
   * has replaced the token while the call was on its way.
   */
  onUnauthorized?: (error: NotesApiError) => void;
}

/** What a method takes as its body: the contract's request schema before defaults and trimming. */
type BodyOf<K extends OperationName> = (typeof operations)[K] extends { body: z.ZodType }
  ? z.input<(typeof operations)[K]["body"]>
  : never;

/** Paging of {@link NotesClient.listNotes}; the API's defaults are limit 10 and offset 0. */
export interface ListNotesOptions {
  /** 1 to 100. */
  limit?: number;
  /** 0 or more. */
  offset?: number;
}

interface CallInput {
  body?: unknown;
  query?: Record<string, string | number | undefined>;
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/** `Retry-After` in seconds: given as seconds, or as an HTTP date. */
function retryAfterOf(response: Response): number | undefined {
  const header = response.headers.get("retry-after");
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

function failure(spec: OperationSpec, response: Response, payload: unknown): NotesApiError {
  const common = {
    status: response.status,
    requestId: response.headers.get("x-request-id") ?? undefined,
    retryAfter: retryAfterOf(response),
  };
  if (spec.envelope === "auth") {
    const parsed = authErrorEnvelope.safeParse(payload);
    if (parsed.success) return new NotesApiError({ ...common, message: parsed.data.message, envelope: parsed.data });
  } else {
    const parsed = notesErrorEnvelope.safeParse(payload);
    if (parsed.success) return new NotesApiError({ ...common, message: parsed.data.error, envelope: parsed.data });
  }
  return new NotesApiError({ ...common, message: `Request failed with status ${response.status}` });
}

/** The client itself; create one with {@link createNotesClient}. */
export class NotesClient {
  readonly #base: string;
  readonly #anonKey: string;
  readonly #fetch: typeof globalThis.fetch;
  readonly #onUnauthorized: ((error: NotesApiError) => void) | undefined;
  #accessToken: string | undefined;
  #expiresAt: Date | undefined;

  constructor(options: NotesClientOptions) {
    this.#base = options.url.replace(/\/+$/, "");
    this.#anonKey = options.anonKey;
    // Called through a closure: a bare reference to window.fetch throws "Illegal invocation" in browsers.
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#onUnauthorized = options.onUnauthorized;
    this.#accessToken = options.accessToken;
  }

  /** The access token in use, exactly as the API issued it (`"Bearer <jwt>"`), if signed in. */
  get accessToken(): string | undefined {
    return this.#accessToken;
  }

  /** When the access token in use expires, if this client signed in (or was told with `setAccessToken`). */
  get expiresAt(): Date | undefined {
    return this.#expiresAt;
  }

  /** Uses `token` (with or without `Bearer `) for the notes calls, e.g. one kept from an earlier session. */
  setAccessToken(token: string, expiresAt?: string | Date): void {
    this.#accessToken = token;
    this.#expiresAt = expiresAt === undefined ? undefined : new Date(expiresAt);
  }

  /**
   * Forgets the access token. Tokens are stateless, so this is all a sign-out
   * is: a copy of the token kept elsewhere stays valid until it expires or
   * the password is changed.
   */
  signOut(): void {
    this.#accessToken = undefined;
    this.#expiresAt = undefined;
  }

  /** Creates an account and keeps its token. */
  async register(body: BodyOf<"register">): Promise<Session> {
    return this.#keep((await this.#call("register", { body })).data as Session);
  }

  /** Logs in and keeps the token. */
  async login(body: BodyOf<"login">): Promise<Session> {
    return this.#keep((await this.#call("login", { body })).data as Session);
  }

  /** Asks for a reset code to be mailed; answers the API's message, which is the same for every email. */
  async requestPasswordReset(body: BodyOf<"requestPasswordReset">): Promise<string> {
    return (await this.#call("requestPasswordReset", { body })).message;
  }

  /** Sets a new password with a reset code and keeps the new token. */
  async createPassword(body: BodyOf<"createPassword">): Promise<Session> {
    return this.#keep((await this.#call("createPassword", { body })).data as Session);
  }

  /** Creates a note of the signed-in user. */
  async createNote(body: BodyOf<"createNote">): Promise<Note> {
    return (await this.#call("createNote", { body })).data as Note;
  }

  /** One page of the signed-in user's notes, newest first. */
  async listNotes(options: ListNotesOptions = {}): Promise<NoteList> {
    return (await this.#call("listNotes", { query: { limit: options.limit, offset: options.offset } }))
      .data as NoteList;
  }

  /** Changes the given fields of a note and answers the updated note. */
  async saveNote(body: BodyOf<"saveNote">): Promise<Note> {
    return (await this.#call("saveNote", { body })).data as Note;
  }

  /** Deletes a note and answers its id. */
  async deleteNote(id: string): Promise<DeletedNote> {
    return (await this.#call("deleteNote", { query: { id } })).data as DeletedNote;
  }

  /**
   * Every page of the signed-in user's notes, one request per page, until
   * `hasMore` is false. Notes created or deleted meanwhile shift the pages,
   * as offset paging does.
   */
  async *notePages(options: Pick<ListNotesOptions, "limit"> = {}): AsyncGenerator<NoteList, void, undefined> {
    let offset = 0;
    for (;;) {
      const page = await this.listNotes({ limit: options.limit, offset });
      yield page;
      if (!page.pagination.hasMore || page.notes.length === 0) return;
      offset += page.notes.length;
    }
  }

  #keep(session: Session): Session {
    this.setAccessToken(session.accessToken, session.expiresAt);
    return session;
  }

  /** Calls `name`: answers its success envelope, checked against the contract, or throws the API's error. */
  async #call(name: OperationName, { body, query = {} }: CallInput): Promise<{ message: string; data: unknown }> {
    const spec: OperationSpec = operations[name];
    const url = new URL(`${this.#base}${spec.interfacePath ?? `/${spec.functionName}`}`);
    for (const [parameter, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(parameter, String(value));
    }
    const headers: Record<string, string> = { apikey: this.#anonKey };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const sentToken = spec.envelope === "notes" ? this.#accessToken : undefined;
    if (sentToken) headers.Authorization = bearer(sentToken);
    let response: Response;
    try {
      response = await this.#fetch(url, {
        method: spec.method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (cause) {
      // fetch rejects only when no answer came: offline, DNS, refused, TLS, or a CORS refusal in a browser.
      throw new NotesApiError({ status: 0, message: `The notes service could not be reached at ${url.origin}`, cause });
    }
    const payload = await readJson(response);
    if (!response.ok) {
      const error = failure(spec, response, payload);
      // Only the token this call sent is known bad: if a login meanwhile set a new one, that session stands.
      if (spec.envelope === "notes" && error.status === 401 && this.#accessToken === sentToken) {
        this.signOut();
        this.#onUnauthorized?.(error);
      }
      throw error;
    }
    const envelope = spec.envelope === "auth"
      ? authSuccessEnvelope(spec.success.data)
      : notesSuccessEnvelope(spec.success.data);
    const parsed = envelope.safeParse(payload);
    if (!parsed.success) {
      throw new NotesApiError({
        status: response.status,
        message: `The ${name} response does not match the API contract`,
        requestId: response.headers.get("x-request-id") ?? undefined,
        cause: parsed.error,
      });
    }
    return parsed.data;
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
