import { requireCaller } from "../_shared/auth/caller.ts";
import { encodeChangesCursor, readChangesCursor } from "../_shared/notes/changes-cursor.ts";
import { type ChangeList, listChangesQuery } from "../_shared/contract/notes.ts";
import { withCallerTransaction } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { notesSuccess } from "../_shared/http/envelopes.ts";
import { CursorExpiredError } from "../_shared/http/errors.ts";
import { listChanges } from "../_shared/queries/note-changes.ts";
import { readQuery } from "../_shared/http/request.ts";

/**
 * `GET /notes-changes?since=&limit=`: what changed in the caller's notes after
 * the cursor, oldest change first, each note once as it is now or as a
 * tombstone, and the cursor to ask from next. Without `since`, every current note.
 */
export const handler = defineEndpoint({
  name: "notes-changes",
  envelope: "notes",
  methods: ["GET"],
  queries: { GET: listChangesQuery },
  handle: async (req) => {
    const caller = await requireCaller(req);
    const { since, limit } = readQuery(req, listChangesQuery);
    const after = since === undefined ? undefined : readChangesCursor(since, caller.sub);
    // One row more than the page tells whether more follow.
    const feed = await withCallerTransaction(caller, listChanges(caller.sub, { after, limit: limit + 1 }));
    // Deletions after the cursor were pruned; a cursor past the sequence belongs to another history (a restore).
    if (after !== undefined && (after < feed.prunedThrough || after > feed.lastChange)) throw new CursorExpiredError();
    const page = feed.changes.slice(0, limit);
    const hasMore = feed.changes.length > limit;
    // The last page reaches the sequence's end as of its snapshot, so its cursor is that end.
    const reached = hasMore ? page[page.length - 1].change : feed.lastChange;
    const data: ChangeList = {
      changes: page.map(({ entry }) => entry),
      cursor: encodeChangesCursor(caller.sub, reached),
      hasMore,
    };
    return notesSuccess(200, "Changes fetched successfully", data);
  },
});
