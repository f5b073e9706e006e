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
import type { Caller } from "../auth/caller.ts";
import type { Query } from "../db/transactions.ts";
import { withCallerTransaction } from "../db/caller-transactions.ts";
import { NoteConflictError, NotFoundError } from "../http/errors.ts";
import type { VersionedOutcome } from "../queries/notes.ts";
import { isUuid } from "../http/uuid.ts";

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
  const found = isUuid(id) ? await withCallerTransaction(caller, queryFor(id)) : undefined;
  if (found === undefined) throw new NotFoundError("note_not_found", "Note not found");
  return found;
}

/** The result of a versioned write that took effect; a 409 carrying the stored note when its version had moved on. */
export function doneOrConflict<T>(outcome: VersionedOutcome<T>): T {
  if ("conflict" in outcome) throw new NoteConflictError(outcome.conflict);
  return outcome.done;
}
