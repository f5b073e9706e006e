/**
 * One page of the caller's changes feed after a point of their change
 * sequence, read in one round trip under their row-level security: what
 * `GET /notes-changes` answers and what `GET /notes-stream` sends, so the two
 * can never disagree on what changed after a cursor.
 *
 * @example
 * ```ts
 * const page = await readChangesPage(caller, after, 100);
 * const cursor = encodeChangesCursor(caller.sub, page.reached);
 * ```
 */
import type { Caller } from "../auth/caller.ts";
import { withCallerTransaction } from "../db/caller-transactions.ts";
import { CursorExpiredError } from "../http/errors.ts";
import { changesEnd, type ChangesPage, listChanges } from "../queries/note-changes.ts";

/** Up to `limit` changes, the point of the sequence they reach, and whether more follow right away. */
export interface ChangesPageRead {
  changes: ChangesPage["changes"];
  /** The change number the page reaches: its last change's, or the sequence's end when nothing more follows. */
  reached: number;
  hasMore: boolean;
}

/**
 * The caller's changes after change number `after` (without it, every current
 * note), at most `limit`. Throws `CursorExpiredError` when deletions after
 * `after` were pruned, or when `after` lies past the sequence's end (a cursor
 * of another history: a restored database).
 */
export async function readChangesPage(
  caller: Caller,
  after: number | undefined,
  limit: number,
): Promise<ChangesPageRead> {
  const feed = await withCallerTransaction(caller, listChanges(caller.sub, { after, limit }));
  if (after !== undefined && (after < feed.prunedThrough || after > feed.lastChange)) throw new CursorExpiredError();
  const { changes, hasMore } = feed;
  // The last page reaches the sequence's end as of its snapshot, so its cursor is that end.
  const reached = hasMore ? changes[changes.length - 1].change : feed.lastChange;
  return { changes, reached, hasMore };
}

/** The number of the caller's latest change, read under the same checks as a page. */
export function readChangesEnd(caller: Caller): Promise<number> {
  return withCallerTransaction(caller, changesEnd());
}
