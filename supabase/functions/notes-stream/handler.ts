import { requireCaller } from "../_shared/auth/caller.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { streamChangesQuery } from "../_shared/contract/notes.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { answerHeaders } from "../_shared/http/envelopes.ts";
import { eventStreamResponse } from "../_shared/http/event-stream.ts";
import { readQuery } from "../_shared/http/request.ts";
import { openChangeStream } from "../_shared/notes/change-stream.ts";
import { readChangesCursor } from "../_shared/notes/changes-cursor.ts";
import { plannedStreamEnd } from "../_shared/notes/stream-endings.ts";

/**
 * `GET /notes-stream?since=`: the caller's changes as server-sent events,
 * first every change after the cursor (`Last-Event-ID` when a client
 * reconnects, else `since`), then each one as it happens; without a cursor,
 * from the feed's end. Ends after `STREAM_MAX_SECONDS` (less up to a tenth, at
 * random, so streams opened together end apart), or when the access
 * token expires, for the client to reconnect from its last event.
 */
export const handler = defineEndpoint({
  name: "notes-stream",
  envelope: "notes",
  methods: ["GET"],
  queries: { GET: streamChangesQuery },
  handle: async (req) => {
    const caller = await requireCaller(req);
    const { since } = readQuery(req, streamChangesQuery);
    // EventSource resends the last id it saw on each reconnect, while its URL keeps the `since` it started with.
    const lastEventId = req.headers.get("last-event-id");
    const after = lastEventId
      ? readChangesCursor(lastEventId, caller.sub, "Last-Event-ID")
      : since === undefined
      ? undefined
      : readChangesCursor(since, caller.sub);
    const endsAt = plannedStreamEnd(getConfig().streams.maxSeconds, caller.exp);
    return eventStreamResponse(await openChangeStream(caller, after, endsAt), answerHeaders.notes);
  },
});
