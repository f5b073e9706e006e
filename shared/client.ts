/**
 * A typed client for the notes service, its calls grouped by concern
 * (`auth`, `notes`, `attachments`, `mfa`, `identities`, `admin`) over one transport. It runs
 * unchanged in browsers, Node (20+) and Deno: it needs only `fetch` and `URL`. Every method answers the
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
 * await client.auth.login({ email: "ada@example.com", password: "correct horse" });
 * const note = await client.notes.create({ title: "Groceries", content: "Eggs" });
 * for await (const page of client.notes.pages({ limit: 50 })) console.log(page.notes.length);
 * ```
 */
import type {
  ChangeList,
  DeletedNote,
  EndedSession,
  IdentityLinkStart,
  IdentityList,
  LogoutScope,
  Note,
  NoteList,
  Reauthentication,
  SecurityEvent,
  Session,
  SessionInfo,
  UnlinkedIdentity,
  User,
} from "../supabase/functions/_shared/contract/mod.ts";
import { type AdminApi, adminApi } from "./client/admin.ts";
import { AttachmentsApi } from "./client/attachments.ts";
import { AuthApi, type SecurityEventsOptions } from "./client/auth.ts";
import { IdentitiesApi, type ProviderRedirect, type ProviderSignInResult } from "./client/identities.ts";
import { type MfaApi, mfaApi } from "./client/mfa.ts";
import { type PasskeysApi, passkeysApi } from "./client/passkeys.ts";
import {
  type CreateNoteOptions,
  type DeleteNoteOptions,
  type ListChangesOptions,
  type ListNotesOptions,
  NotesApi,
} from "./client/notes.ts";
import type { BodyOf, NotesClientOptions, RequestOptions, SessionListener } from "./client/options.ts";
import { Transport } from "./client/transport.ts";
import type { WatchChangesOptions } from "./client/watch.ts";

/** The client itself; create one with {@link createNotesClient}. */
export class NotesClient {
  /** The one transport every concern calls through: the session, its refresh, deadlines and errors. */
  readonly #transport: Transport;
  /** The account and its sessions: register, login, sign-out, passwords, verification, the user. */
  readonly auth: AuthApi;
  /** The signed-in user's notes, their changes and a live watch of them. */
  readonly notes: NotesApi;
  /** Files in the signed-in user's notes: upload, list, download, a short-lived URL, remove. */
  readonly attachments: AttachmentsApi;
  /** The second factor of the signed-in user. */
  readonly mfa: MfaApi;
  /** Sign-in with a provider, and the providers linked to the account. */
  readonly identities: IdentitiesApi;
  /** Passkeys: registering, signing in (also in autofill), the second step, and the account's list. */
  readonly passkeys: PasskeysApi;
  /** The admin API, for a signed-in ADMIN account. */
  readonly admin: AdminApi;

  constructor(options: NotesClientOptions) {
    this.#transport = new Transport(options);
    this.auth = new AuthApi(this.#transport);
    this.notes = new NotesApi(this.#transport);
    this.attachments = new AttachmentsApi(this.#transport);
    this.mfa = mfaApi(this.#transport);
    this.identities = new IdentitiesApi(this.#transport);
    this.passkeys = passkeysApi(this.#transport, options.passkeyCeremonies);
    this.admin = adminApi(this.#transport);
  }

  /** The session in use, if signed in: read from the storage, so another tab's refresh or sign-out shows here. */
  get session(): Session | undefined {
    return this.#transport.session;
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
    this.#transport.setSession(session);
  }

  /** Calls `listener` after every change of the session; answers a function that stops it. */
  onSessionChange(listener: SessionListener): () => void {
    return this.#transport.onSessionChange(listener);
  }

  // The flat methods of version 1, kept one release so that apps move to the concerns at their own pace.

  /** @deprecated Use `client.auth.register`; this alias goes in the next major version. */
  register(body: BodyOf<"register">, request?: RequestOptions): Promise<Session> {
    return this.auth.register(body, request);
  }

  /** @deprecated Use `client.auth.login`; this alias goes in the next major version. */
  login(body: BodyOf<"login">, request?: RequestOptions): Promise<Session> {
    return this.auth.login(body, request);
  }

  /** @deprecated Use `client.auth.signOut`; this alias goes in the next major version. */
  signOut(options?: { scope?: LogoutScope } & RequestOptions): Promise<void> {
    return this.auth.signOut(options);
  }

  /** @deprecated Use `client.auth.refreshSession`; this alias goes in the next major version. */
  refreshSession(request?: RequestOptions): Promise<Session> {
    return this.auth.refreshSession(request);
  }

  /** @deprecated Use `client.auth.listSessions`; this alias goes in the next major version. */
  listSessions(request?: RequestOptions): Promise<SessionInfo[]> {
    return this.auth.listSessions(request);
  }

  /** @deprecated Use `client.auth.revokeSession`; this alias goes in the next major version. */
  revokeSession(id: string, request?: RequestOptions): Promise<EndedSession> {
    return this.auth.revokeSession(id, request);
  }

  /** @deprecated Use `client.auth.getUser`; this alias goes in the next major version. */
  getUser(request?: RequestOptions): Promise<User> {
    return this.auth.getUser(request);
  }

  /** @deprecated Use `client.auth.securityEvents`; this alias goes in the next major version. */
  securityEvents(options?: SecurityEventsOptions & RequestOptions): Promise<SecurityEvent[]> {
    return this.auth.securityEvents(options);
  }

  /** @deprecated Use `client.auth.requestPasswordReset`; this alias goes in the next major version. */
  requestPasswordReset(body: BodyOf<"requestPasswordReset">, request?: RequestOptions): Promise<string> {
    return this.auth.requestPasswordReset(body, request);
  }

  /** @deprecated Use `client.auth.createPassword`; this alias goes in the next major version. */
  createPassword(body: BodyOf<"createPassword">, request?: RequestOptions): Promise<Session> {
    return this.auth.createPassword(body, request);
  }

  /** @deprecated Use `client.auth.verifyEmail`; this alias goes in the next major version. */
  verifyEmail(body: BodyOf<"verifyEmail">, request?: RequestOptions): Promise<Session> {
    return this.auth.verifyEmail(body, request);
  }

  /** @deprecated Use `client.auth.resendVerification`; this alias goes in the next major version. */
  resendVerification(body: BodyOf<"resendVerification">, request?: RequestOptions): Promise<string> {
    return this.auth.resendVerification(body, request);
  }

  /** @deprecated Use `client.auth.changePassword`; this alias goes in the next major version. */
  changePassword(body: BodyOf<"changePassword">, request?: RequestOptions): Promise<Session> {
    return this.auth.changePassword(body, request);
  }

  /** @deprecated Use `client.auth.reauthenticate`; this alias goes in the next major version. */
  reauthenticate(proof: Parameters<AuthApi["reauthenticate"]>[0], request?: RequestOptions): Promise<Reauthentication> {
    return this.auth.reauthenticate(proof, request);
  }

  /** @deprecated Use `client.auth.deleteAccount`; this alias goes in the next major version. */
  deleteAccount(body: BodyOf<"deleteAccount">, request?: RequestOptions): Promise<void> {
    return this.auth.deleteAccount(body, request);
  }

  /** @deprecated Use `client.notes.create`; this alias goes in the next major version. */
  createNote(body: BodyOf<"createNote">, options?: CreateNoteOptions): Promise<Note> {
    return this.notes.create(body, options);
  }

  /** @deprecated Use `client.notes.get`; this alias goes in the next major version. */
  getNote(id: string, request?: RequestOptions): Promise<Note> {
    return this.notes.get(id, request);
  }

  /** @deprecated Use `client.notes.list`; this alias goes in the next major version. */
  listNotes(options?: ListNotesOptions & RequestOptions): Promise<NoteList> {
    return this.notes.list(options);
  }

  /** @deprecated Use `client.notes.search`; this alias goes in the next major version. */
  search(q: string, options?: Omit<ListNotesOptions, "q"> & RequestOptions): Promise<NoteList> {
    return this.notes.search(q, options);
  }

  /** @deprecated Use `client.notes.save`; this alias goes in the next major version. */
  saveNote(body: BodyOf<"saveNote">, request?: RequestOptions): Promise<Note> {
    return this.notes.save(body, request);
  }

  /** @deprecated Use `client.notes.delete`; this alias goes in the next major version. */
  deleteNote(id: string, options?: DeleteNoteOptions): Promise<DeletedNote> {
    return this.notes.delete(id, options);
  }

  /** @deprecated Use `client.notes.pages`; this alias goes in the next major version. */
  notePages(options?: Pick<ListNotesOptions, "limit"> & RequestOptions): AsyncGenerator<NoteList, void, undefined> {
    return this.notes.pages(options);
  }

  /** @deprecated Use `client.notes.changes`; this alias goes in the next major version. */
  listChanges(options?: ListChangesOptions & RequestOptions): Promise<ChangeList> {
    return this.notes.changes(options);
  }

  /** @deprecated Use `client.notes.sync`; this alias goes in the next major version. */
  syncNotes(
    cursor?: string,
    options?: Pick<ListChangesOptions, "limit"> & RequestOptions,
  ): AsyncGenerator<ChangeList, void, undefined> {
    return this.notes.sync(cursor, options);
  }

  /** @deprecated Use `client.notes.watchChanges`; this alias goes in the next major version. */
  watchChanges(options: WatchChangesOptions): Promise<void> {
    return this.notes.watchChanges(options);
  }

  /** @deprecated Use `client.identities.signInUrl`; this alias goes in the next major version. */
  providerSignInUrl(redirect: ProviderRedirect): Promise<string> {
    return this.identities.signInUrl(redirect);
  }

  /** @deprecated Use `client.identities.signIn`; this alias goes in the next major version. */
  signInWithProvider(redirect: ProviderRedirect): Promise<void> {
    return this.identities.signIn(redirect);
  }

  /** @deprecated Use `client.identities.completeSignIn`; this alias goes in the next major version. */
  completeProviderSignIn(options?: { url?: string } & RequestOptions): Promise<ProviderSignInResult> {
    return this.identities.completeSignIn(options);
  }

  /** @deprecated Use `client.identities.list`; this alias goes in the next major version. */
  listIdentities(request?: RequestOptions): Promise<IdentityList> {
    return this.identities.list(request);
  }

  /** @deprecated Use `client.identities.link`; this alias goes in the next major version. */
  linkIdentity(
    body: BodyOf<"linkIdentity">,
    options?: { navigate?: boolean } & RequestOptions,
  ): Promise<IdentityLinkStart> {
    return this.identities.link(body, options);
  }

  /** @deprecated Use `client.identities.reauthenticate`; this alias goes in the next major version. */
  reauthenticateWithProvider(
    body: BodyOf<"reauthenticateWithProvider">,
    options?: { navigate?: boolean } & RequestOptions,
  ): Promise<IdentityLinkStart> {
    return this.identities.reauthenticate(body, options);
  }

  /** @deprecated Use `client.identities.unlink`; this alias goes in the next major version. */
  unlinkIdentity(id: string, request?: RequestOptions): Promise<UnlinkedIdentity> {
    return this.identities.unlink(id, request);
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
