/**
 * Acting on one note that the caller names by id: inside the caller's
 * row-level-security transaction, with a 404 when the id names no note of
 * theirs. A note that exists but belongs to someone else is equally a 404,
 * so the answer never tells whether another user's note exists.
 *
 * @example
 * ```ts
 * const id = await withOwnNote(caller, query.id, (noteId) => deleteNote(caller.sub, noteId));
 * ```
 */
import { z } from "zod";
import type { Caller } from "./caller.ts";
import { type Query, withCallerTransaction } from "./db.ts";
import { NotFoundError } from "./http-error.ts";

// Any 8-4-4-4-12 hex string, as Postgres's uuid type reads it in its usual form.
const noteId = z.guid();

/**
 * Runs the query that `queryFor` builds for note `id` in the caller's
 * transaction and returns its result. Throws a 404 when it finds nothing, or
 * at once when `id` is not a uuid: such an id names no note, and sending it
 * would only make Postgres fail the cast.
 */
export async function withOwnNote<Row, T>(
  caller: Caller,
  id: string,
  queryFor: (id: string) => Query<Row, T | undefined>,
): Promise<T> {
  const found = noteId.safeParse(id).success ? await withCallerTransaction(caller, queryFor(id)) : undefined;
  if (found === undefined) throw new NotFoundError("Note not found");
  return found;
}
