import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChangeList, Note, NoteChange } from "../supabase/functions/_shared/contract/mod.ts";
import { type ApiResponse, call, type RegisteredUser, registerUser } from "./support/api.ts";
import { allNotes, changeListEnvelope, createNote, expectNotesError } from "./support/notes.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";
import { openTestDatabase, type TestDatabase } from "./support/database.ts";

/** GET /notes-changes as `user`, with `since` and `limit` when given. */
function requestChanges(
  user: RegisteredUser,
  query: { since?: string; limit?: number } = {},
  on: { call: typeof call } = { call },
): Promise<ApiResponse> {
  const params = new URLSearchParams();
  if (query.since !== undefined) params.set("since", query.since);
  if (query.limit !== undefined) params.set("limit", String(query.limit));
  return on.call(`/notes-changes?${params}`, { token: user.accessToken });
}

async function changes(
  user: RegisteredUser,
  query: { since?: string; limit?: number } = {},
): Promise<ChangeList> {
  const response = await requestChanges(user, query);
  expect(response.status, response.text).toBe(200);
  return changeListEnvelope.strict().parse(response.body).data;
}

/** Every page after `since`, `limit` at a time, until hasMore is false: the changes in order and the last cursor. */
async function drain(
  user: RegisteredUser,
  since: string | undefined,
  limit = 100,
) {
  const seen: NoteChange[] = [];
  let cursor = since;
  for (;;) {
    const page = await changes(user, { since: cursor, limit });
    seen.push(...page.changes);
    cursor = page.cursor;
    if (!page.hasMore) return { seen, cursor };
  }
}

/** A client's copy of the notes: the changes applied in order. */
function apply(
  copy: Map<string, Note>,
  entries: readonly NoteChange[],
): Map<string, Note> {
  for (const entry of entries) {
    if ("deleted" in entry) copy.delete(entry.id);
    else copy.set(entry.id, entry);
  }
  return copy;
}

async function save(
  user: RegisteredUser,
  id: string,
  body: Record<string, unknown>,
): Promise<Note> {
  const response = await call("/notes-save", {
    token: user.accessToken,
    body: { id, ...body },
  });
  expect(response.status, response.text).toBe(200);
  return (response.body as { data: Note }).data;
}

async function remove(user: RegisteredUser, id: string): Promise<void> {
  const response = await call(`/notes-delete?id=${id}`, {
    token: user.accessToken,
    method: "DELETE",
  });
  expect(response.status, response.text).toBe(200);
}

const ids = (entries: readonly NoteChange[]) => entries.map((entry) => entry.id);

describe("GET /notes-changes", () => {
  let ada: RegisteredUser;
  beforeAll(async () => {
    ada = await registerUser("changes");
  });

  it("without since, answers every current note, oldest change first, and a cursor", async () => {
    const first = await createNote(ada, { title: "first" });
    const second = await createNote(ada, { title: "second" });
    const third = await createNote(ada, { title: "third" });
    await save(ada, first.id, { content: "edited" });
    await remove(ada, third.id);
    const page = await changes(ada);
    expect(ids(page.changes)).toEqual([second.id, first.id]);
    expect(page.changes[1]).toMatchObject({ id: first.id, content: "edited" });
    expect(page.hasMore).toBe(false);
    expect(page.cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    // Nothing changed since: nothing to answer, and the same point.
    const again = await changes(ada, { since: page.cursor });
    expect(again).toEqual({ changes: [], cursor: page.cursor, hasMore: false });
  });

  it("after a cursor, answers each edited note once as it is now, and each deleted one as a tombstone", async () => {
    const start = (await drain(ada, undefined)).cursor;
    const kept = await createNote(ada, { title: "kept" });
    const gone = await createNote(ada, { title: "gone" });
    await save(ada, kept.id, { title: "kept, edited once" });
    const latest = await save(ada, kept.id, { title: "kept, edited twice" });
    await remove(ada, gone.id);
    const page = await changes(ada, { since: start });
    expect(page.changes).toEqual([latest, { id: gone.id, deleted: true }]);
    expect(page.hasMore).toBe(false);
  });

  it("pages one change at a time, never answering a change twice, and the copy ends equal to the notes", async () => {
    const bea = await registerUser("changes-paging");
    for (const title of ["a", "b", "c", "d", "e"]) {
      await createNote(bea, { title });
    }
    const { seen, cursor } = await drain(bea, undefined, 1);
    expect(seen).toHaveLength(5);
    expect(new Set(ids(seen)).size).toBe(5);
    const notes = await allNotes(bea);
    await save(bea, notes[0].id, { content: "changed" });
    await remove(bea, notes[1].id);
    await createNote(bea, { title: "f" });
    const after = await drain(bea, cursor, 1);
    expect(after.seen).toHaveLength(3);
    const copy = apply(apply(new Map(), seen), after.seen);
    expect([...copy.values()].sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      (await allNotes(bea)).sort((a, b) => a.id.localeCompare(b.id)),
    );
  });

  it("loses nothing when writes race a client paging through the feed", async () => {
    const cleo = await registerUser("changes-race");
    const initial = await Promise.all(
      Array.from(
        { length: 12 },
        (_, n) => createNote(cleo, { title: `n${n}` }),
      ),
    );
    let writing = true;
    const writer = (async () => {
      // Creates, edits and deletes in parallel bursts, as several devices would.
      for (let round = 0; round < 6; round++) {
        await Promise.all([
          createNote(cleo, { title: `race ${round}` }),
          save(cleo, initial[round].id, { content: `round ${round}` }),
          remove(cleo, initial[11 - round].id),
          save(cleo, initial[(round + 3) % 6].id, {
            title: `retitled ${round}`,
          }),
        ]);
      }
      writing = false;
    })();
    const copy = new Map<string, Note>();
    let cursor: string | undefined;
    // The client keeps paging, two at a time, until the writer is done and the feed has nothing more.
    for (;;) {
      const done = !writing;
      const page = await changes(cleo, { since: cursor, limit: 2 });
      apply(copy, page.changes);
      cursor = page.cursor;
      if (done && !page.hasMore) break;
    }
    await writer;
    const notes = await allNotes(cleo);
    expect([...copy.values()].sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      notes.sort((a, b) => a.id.localeCompare(b.id)),
    );
  });

  it("never shows another user's changes, and refuses another user's cursor", async () => {
    const dan = await registerUser("changes-other");
    const danCursor = (await changes(dan)).cursor;
    const adaCursor = (await drain(ada, undefined)).cursor;
    const secret = await createNote(ada, { title: "Ada's secret" });
    await remove(ada, (await createNote(ada, { title: "Ada's deleted" })).id);
    expect(await changes(dan, { since: danCursor })).toMatchObject({
      changes: [],
      hasMore: false,
    });
    expect(ids((await changes(dan)).changes)).not.toContain(secret.id);
    const response = await requestChanges(dan, { since: adaCursor });
    expect(expectNotesError(response, 400)).toMatch(/^since /);
  });

  it.each([
    ["since", "since=not-a-cursor"],
    ["since", "since="],
    ["since", `since=${btoa("c1.x.1")}`],
    ["since", `since=${"A".repeat(201)}`],
    ["limit", "limit=0"],
    ["limit", "limit=101"],
    ["after", "after=1"],
  ])("answers 400 naming %s (%s)", async (parameter, query) => {
    const response = await call(`/notes-changes?${query}`, {
      token: ada.accessToken,
    });
    expect(expectNotesError(response, 400)).toMatch(
      new RegExp(`^${parameter} `),
    );
  });

  it("needs a token", async () => {
    expectNotesError(await call("/notes-changes"), 401);
  });
});

describe("tombstones older than NOTES_TOMBSTONE_DAYS", () => {
  let stack: ScratchStack;
  beforeAll(async () => {
    stack = await startScratchStack("tombstones");
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("are pruned, and a cursor that needed them answers 410 cursor_expired while a newer one still works", async () => {
    const eve = await registerUser("tombstones", { baseUrl: stack.baseUrl });
    const feed = (since?: string) => requestChanges(eve, { since }, stack);
    const made = await stack.call("/notes-create", {
      token: eve.accessToken,
      body: { title: "short-lived" },
    });
    const id = (made.body as { data: Note }).data.id;
    const before = changeListEnvelope.parse((await feed()).body).data.cursor;
    await stack.call(`/notes-delete?id=${id}`, {
      token: eve.accessToken,
      method: "DELETE",
    });
    const afterDeletion = changeListEnvelope.parse((await feed(before)).body).data;
    expect(afterDeletion.changes).toEqual([{ id, deleted: true }]);

    // 31 days pass for the tombstone; the stack's schedule (its mail loop) prunes it.
    await stack
      .sql`update public.note_tombstones set deleted_at = now() - interval '31 days' where note_id = ${id}`;
    let expired: ApiResponse | undefined;
    for (let attempt = 0; attempt < 100; attempt++) {
      expired = await feed(before);
      if (expired.status !== 200) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(expectNotesError(expired as ApiResponse, 410)).toMatch(/expired/);
    expect((expired as ApiResponse).body).toMatchObject({
      code: "cursor_expired",
    });
    expect(
      await stack
        .sql`select 1 from public.note_tombstones where note_id = ${id}`,
    ).toHaveLength(0);
    // A cursor from after the deletion needs nothing that was pruned; a fresh start always works.
    expect((await feed(afterDeletion.cursor)).status).toBe(200);
    expect((await feed()).status).toBe(200);
  });
});

describe("notices of changes (channel note_changes)", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(async () => {
    await database?.close();
  });

  it("sends one notice per owner and transaction, however many notes and statements it changed", async () => {
    const owner = crypto.randomUUID();
    const received: string[] = [];
    let done: () => void = () => {};
    const finished = new Promise<void>((resolve) => done = resolve);
    const unlisten = await database.listen("note_changes", (payload) => {
      const [from, number] = payload.split(" ");
      if (from !== owner) return;
      if (number === "done") done();
      else received.push(number);
    });
    try {
      const { query } = database;
      await query("insert into app.users (id, name, email, password_hash) values ($1, 'Notices', $2, 'x')", [
        owner,
        `notices-${owner}@example.com`,
      ]);
      // A notice names a number its transaction took: an insert its first note's (its row trigger sends the notice),
      // an update or a deletion the statement's latest.
      await query(
        "insert into public.notes (created_by, title) select $1, 'note ' || n from generate_series(1, 3) as n",
        [owner],
      );
      await query("update public.notes set status = 'PUBLISHED' where created_by = $1", [owner]);
      await query("delete from public.notes where created_by = $1 and title <> 'note 1'", [owner]);
      // Two statements in one transaction: one notice, naming a number of the first (a stream reads all that follows).
      await query(`do $$ begin
        insert into public.notes (created_by, title) values ('${owner}', 'note 4');
        update public.notes set title = 'note 4, edited' where created_by = '${owner}' and title = 'note 4';
      end $$`);
      // Notices arrive in the order their transactions commit: this one comes after every notice above.
      await query("select pg_notify('note_changes', $1)", [`${owner} done`]);
      await finished;
      expect(received).toEqual(["1", "6", "8", "9"]);
      const [counts] = await query(
        "select notes, published, last_change::int from app.note_counts where user_id = $1",
        [
          owner,
        ],
      );
      expect(counts).toEqual({ notes: 2, published: 1, last_change: 10 });
    } finally {
      await unlisten();
      await database.query("delete from app.users where id = $1", [owner]);
    }
  });
});
