/**
 * A typed client for the notes service. It runs unchanged in browsers, Node
 * (18+) and Deno: it needs only `fetch` and `URL`. Every method answers the
 * `data` of the success envelope, checked against the contract; every failure
 * throws a {@link NotesApiError} carrying the status and the API's own words.
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

/** `Authorization` value for a token given with or without its `Bearer ` prefix. */
export function bearer(token: string): string {
  return token.startsWith("Bearer ") ? token : `Bearer ${token}`;
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

function failure(spec: OperationSpec, response: Response, payload: unknown): NotesApiError {
  const requestId = response.headers.get("x-request-id") ?? undefined;
  const status = response.status;
  if (spec.envelope === "auth") {
    const parsed = authErrorEnvelope.safeParse(payload);
    if (parsed.success) return new NotesApiError(status, parsed.data.message, parsed.data, requestId);
  } else {
    const parsed = notesErrorEnvelope.safeParse(payload);
    if (parsed.success) return new NotesApiError(status, parsed.data.error, parsed.data, requestId);
  }
  return new NotesApiError(status, `Request failed with status ${status}`, undefined, requestId);
}

/** The client itself; create one with {@link createNotesClient}. */
export class NotesClient {
  readonly #base: string;
  readonly #anonKey: string;
  readonly #fetch: typeof globalThis.fetch;
  #accessToken: string | undefined;

  constructor(options: NotesClientOptions) {
    this.#base = options.url.replace(/\/+$/, "");
    this.#anonKey = options.anonKey;
    // Called through a closure: a bare reference to window.fetch throws "Illegal invocation" in browsers.
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#accessToken = options.accessToken;
  }

  /** The access token in use, exactly as the API issued it (`"Bearer <jwt>"`), if signed in. */
  get accessToken(): string | undefined {
    return this.#accessToken;
  }

  /** Uses `token` (with or without `Bearer `) for the notes calls; undefined signs out. */
  setAccessToken(token: string | undefined): void {
    this.#accessToken = token;
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
    this.#accessToken = session.accessToken;
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
    if (spec.envelope === "notes" && this.#accessToken) headers.Authorization = bearer(this.#accessToken);
    const response = await this.#fetch(url, {
      method: spec.method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const payload = await readJson(response);
    if (!response.ok) throw failure(spec, response, payload);
    const envelope = spec.envelope === "auth"
      ? authSuccessEnvelope(spec.success.data)
      : notesSuccessEnvelope(spec.success.data);
    const parsed = envelope.safeParse(payload);
    if (!parsed.success) {
      const requestId = response.headers.get("x-request-id") ?? undefined;
      throw new NotesApiError(
        response.status,
        `The ${name} response does not match the API contract`,
        undefined,
        requestId,
      );
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
