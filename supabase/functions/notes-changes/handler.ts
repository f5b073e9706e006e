import { requireCaller } from "../_shared/auth/caller.ts";
import { encodeChangesCursor, readChangesCursor } from "../_shared/notes/changes-cursor.ts";
import { readChangesPage } from "../_shared/notes/changes-page.ts";
import { type ChangeList, listChangesQuery } from "../_shared/contract/notes.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { notesSuccess } from "../_shared/http/envelopes.ts";
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
    const page = await readChangesPage(caller, after, limit);
    const data: ChangeList = {
      changes: page.changes.map(({ entry }) => entry),
      cursor: encodeChangesCursor(caller.sub, page.reached),
      hasMore: page.hasMore,
    };
    return notesSuccess(200, "Changes fetched successfully", data);
  },
});
