import { requireCaller } from "../_shared/auth/caller.ts";
import { listNotesQuery, type NoteList } from "../_shared/contract/notes.ts";
import { withCallerTransaction } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { notesSuccess } from "../_shared/http/envelopes.ts";
import { listNotes } from "../_shared/queries/note-listing.ts";
import { readQuery } from "../_shared/http/request.ts";

/**
 * `GET /notes-fetch?limit=&offset=&status=&q=&order=`: one page of the
 * caller's notes that match the filters, newest first by creation or by last
 * edit, with how many match in all.
 */
export const handler = defineEndpoint({
  name: "notes-fetch",
  envelope: "notes",
  methods: ["GET"],
  queries: { GET: listNotesQuery },
  handle: async (req) => {
    const caller = await requireCaller(req);
    const listing = readQuery(req, listNotesQuery);
    const { limit, offset } = listing;
    const { notes, total } = await withCallerTransaction(caller, listNotes(caller.sub, listing));
    const data: NoteList = {
      notes,
      pagination: { total, limit, offset, hasMore: offset + notes.length < total },
      userId: caller.sub,
    };
    return notesSuccess(200, "Notes fetched successfully", data);
  },
});
