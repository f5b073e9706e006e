/**
 * The signed-in user's notes: `client.notes`. Create, read, list, search, save and delete them, and follow their
 * changes.
 */
import {
  type ChangeList,
  type DeletedNote,
  idempotencyKeyHeader,
  type Note,
  type NoteList,
  type NoteOrder,
} from "../../supabase/functions/_shared/contract/mod.ts";
import { outcomeUnknown } from "./failures.ts";
import type { BodyOf, RequestOptions } from "./options.ts";
import type { Transport } from "./transport.ts";
import { runWatch, type WatchChangesOptions } from "./watch.ts";

/** Paging and filters of {@link NotesApi.list}; the API's defaults are limit 10, offset 0, every note. */
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

/** Paging of {@link NotesApi.changes} and {@link NotesApi.sync}. */
export interface ListChangesOptions {
  /** `cursor` of an earlier answer; omit it to start with every current note. */
  since?: string;
  /** 1 to 100 changes per request (100 by default). */
  limit?: number;
}

/** Options of {@link NotesApi.create}. */
export interface CreateNoteOptions extends RequestOptions {
  /**
   * The create's `Idempotency-Key`; the client makes a fresh one per call when
   * none is given. Give your own to retry a create across app restarts.
   */
  idempotencyKey?: string;
}

/** Options of {@link NotesApi.delete}. */
export interface DeleteNoteOptions extends RequestOptions {
  /** The note's `updatedAt` as last read: a note changed since is kept, and the call throws a 409. */
  expectedUpdatedAt?: string;
}

/** The notes' calls, through the client's transport. */
export class NotesApi {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Creates a note of the signed-in user. Each call sends an `Idempotency-Key`
   * and, after a 503 or no answer at all (the note may or may not have been
   * made), retries once with the same key, so a retry never makes it twice.
   * The retry spends what is left of the call's deadline; after a `timeout`
   * there is none left, so it is not retried: call again with the same
   * `idempotencyKey` to learn whether the note was made.
   */
  async create(
    body: BodyOf<"createNote">,
    options: CreateNoteOptions = {},
  ): Promise<Note> {
    const headers = {
      [idempotencyKeyHeader]: options.idempotencyKey ?? crypto.randomUUID(),
    };
    const deadline = this.#transport.deadline(options);
    try {
      return await this.#transport.call("createNote", { body, headers, deadline }) as Note;
    } catch (error) {
      if (!outcomeUnknown(error)) throw error;
      return await this.#transport.call("createNote", { body, headers, deadline }) as Note;
    }
  }

  /** One of the signed-in user's notes, as it is stored now. */
  async get(id: string, request: RequestOptions = {}): Promise<Note> {
    return await this.#transport.call("getNote", {
      query: { id },
      deadline: this.#transport.deadline(request),
    }) as Note;
  }

  /** One page of the signed-in user's notes that match the filters given, newest first. */
  async list(options: ListNotesOptions & RequestOptions = {}): Promise<NoteList> {
    const { limit, offset, status, q, order } = options;
    return await this.#transport.call("listNotes", {
      query: { limit, offset, status, q, order },
      deadline: this.#transport.deadline(options),
    }) as NoteList;
  }

  /**
   * Changes the given fields of a note and answers the updated note. With
   * `expectedUpdatedAt`, a note changed since throws a {@link NotesApiError}
   * with status 409, `code` `note_conflict` and the stored note as `note`.
   */
  async save(body: BodyOf<"saveNote">, request: RequestOptions = {}): Promise<Note> {
    return await this.#transport.call("saveNote", { body, deadline: this.#transport.deadline(request) }) as Note;
  }

  /** Deletes a note and answers its id; with `expectedUpdatedAt`, only while the note has that version. */
  async delete(
    id: string,
    options: DeleteNoteOptions = {},
  ): Promise<DeletedNote> {
    return await this.#transport.call("deleteNote", {
      query: { id, expectedUpdatedAt: options.expectedUpdatedAt },
      deadline: this.#transport.deadline(options),
    }) as DeletedNote;
  }

  /** The signed-in user's notes that hold every word of `q`, newest first: {@link NotesApi.list} with `q`. */
  async search(
    q: string,
    options: Omit<ListNotesOptions, "q"> & RequestOptions = {},
  ): Promise<NoteList> {
    return await this.list({ ...options, q });
  }

  /**
   * Every page of the signed-in user's notes, one request per page, until
   * `hasMore` is false. Notes created or deleted meanwhile shift the pages,
   * as offset paging does. Each page's request has a deadline of its own.
   */
  async *pages(
    options: Pick<ListNotesOptions, "limit"> & RequestOptions = {},
  ): AsyncGenerator<NoteList, void, undefined> {
    let offset = 0;
    for (;;) {
      const page = await this.list({ ...options, offset });
      yield page;
      if (!page.pagination.hasMore || page.notes.length === 0) return;
      offset += page.notes.length;
    }
  }

  /**
   * One page of the changes feed: the notes changed after `since` as they are
   * now, and tombstones (`{ id, deleted: true }`) of those deleted since. A
   * cursor too old for the deletions kept throws a {@link NotesApiError}
   * with status 410 and `code` `cursor_expired`: drop the local copy and
   * start again without `since`.
   */
  async changes(options: ListChangesOptions & RequestOptions = {}): Promise<ChangeList> {
    return await this.#transport.call("listChanges", {
      query: { since: options.since, limit: options.limit },
      deadline: this.#transport.deadline(options),
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
   * for await (const page of client.notes.sync(localStorage.getItem("cursor") ?? undefined)) {
   *   for (const change of page.changes) "deleted" in change ? copy.delete(change.id) : copy.set(change.id, change);
   *   localStorage.setItem("cursor", page.cursor);
   * }
   * ```
   */
  async *sync(
    cursor?: string,
    options: Pick<ListChangesOptions, "limit"> & RequestOptions = {},
  ): AsyncGenerator<ChangeList, void, undefined> {
    let since = cursor;
    for (;;) {
      const page = await this.changes({ ...options, since });
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
   * void client.notes.watchChanges({
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
  watchChanges(options: WatchChangesOptions): Promise<void> {
    return runWatch(this.#transport, options);
  }
}
