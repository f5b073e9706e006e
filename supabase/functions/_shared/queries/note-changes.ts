/**
 * SQL of the changes feed (`GET /notes-changes`): the caller's notes and
 * tombstones whose change number follows a cursor, oldest change first, read
 * in one statement together with where the caller's change sequence stands,
 * so the page and the cursor it answers come from one snapshot. Runs inside
 * `withCallerTransaction`: row-level security limits both tables to the
 * caller's rows.
 *
 * @example
 * ```ts
 * const feed = await withCallerTransaction(caller, listChanges(caller.sub, { after: 41, limit: 100 }));
 * ```
 */
import type { NoteChange } from "../contract/notes.ts";
import type { Query, Statement } from "../db/transactions.ts";
import { timestamptzAsText } from "../db/timestamps.ts";
import { noteColumns, type NoteRow, toNote } from "./notes.ts";

/** A note or a tombstone with its change number, and the caller's position on every row. */
type ChangeRow = { [Column in keyof NoteRow]: NoteRow[Column] | null } & {
  /** bigint columns arrive as text. */
  change_seq: string | null;
  deleted: boolean | null;
  last_change: string;
  pruned_through: string;
};

/** One page of the feed, each change with its number, and where the caller's sequence stands. */
export interface ChangesPage {
  changes: { change: number; entry: NoteChange }[];
  /** Whether more changes follow the page's last. */
  hasMore: boolean;
  /** The number of the caller's latest change, as of the page's snapshot. */
  lastChange: number;
  /** The highest number among the caller's pruned tombstones: a cursor before it has lost deletions. */
  prunedThrough: number;
}

function toChange(row: ChangeRow): NoteChange {
  if (row.deleted) return { id: String(row.id), deleted: true };
  return toNote(row as NoteRow);
}

/**
 * Up to `limit` of the caller's changes after change number `after`: each
 * note whose latest change follows it, as it is now, and each note deleted
 * since, as a tombstone. Without `after`, every current note and no
 * tombstones (a client with nothing has nothing to delete). Each side is read
 * from its `(created_by, change_seq)` index up to `limit` rows, and one more,
 * which tells whether more follow: its title and content are not sent, since
 * a stream catching up a change at a time would read every large note twice.
 */
export function listChanges(
  owner: string,
  page: { after: number | undefined; limit: number },
): Query<ChangeRow, ChangesPage> {
  return {
    text: `select sequence.last_change, sequence.pruned_through, entry.change_seq, entry.id, entry.created_by,
                  case when row_number() over page_order <= $3 then entry.title end as title,
                  case when row_number() over page_order <= $3 then entry.content end as content,
                  entry.status, entry.created_at, entry.updated_at, entry.attachments, entry.deleted
           from app.caller_change_position() as sequence
           left join lateral (
             (select change_seq, ${noteColumns}, false as deleted
              from public.notes
              where created_by = $1 and change_seq > $2
              order by change_seq
              limit $3 + 1)
             union all
             (select change_seq, note_id, null::uuid, null::text, null::text, null::text, null::timestamptz,
                     null::timestamptz, null::integer, true
              from public.note_tombstones
              where $4 and created_by = $1 and change_seq > $2
              order by change_seq
              limit $3 + 1)
           ) as entry on true
           window page_order as (order by entry.change_seq)
           order by entry.change_seq
           limit $3 + 1`,
    values: [owner, page.after ?? 0, page.limit, page.after !== undefined],
    types: timestamptzAsText,
    read: (rows) => {
      const [first] = rows;
      const changed = rows.filter((row) => row.change_seq !== null);
      return {
        changes: changed.slice(0, page.limit).map((row) => ({ change: Number(row.change_seq), entry: toChange(row) })),
        hasMore: changed.length > page.limit,
        lastChange: Number(first?.last_change ?? 0),
        prunedThrough: Number(first?.pruned_through ?? 0),
      };
    },
  };
}

/** The number of the caller's latest change: where a stream that starts at the feed's end stands. */
export function changesEnd(): Query<{ last_change: string }, number> {
  return {
    text: "select last_change from app.caller_change_position()",
    read: ([row]) => Number(row?.last_change ?? 0),
  };
}

/**
 * Deletes up to 1,000 tombstones older than `keepDays`, oldest first, and
 * marks each owner's sequence as pruned that far, so a cursor that needed
 * them answers 410. Run by the mail drain, the service's one schedule.
 */
export function pruneExpiredTombstones(keepDays: number): Statement {
  return { text: "select app.prune_note_tombstones($1, 1000)", values: [keepDays] };
}
