import { beforeAll, describe, expect, it } from "vitest";
import type { Note } from "../supabase/functions/_shared/contract/mod.ts";
import { call, type RegisteredUser, registerUser } from "./support/api.ts";
import { createNote, expectNotesError, fetchNotes } from "./support/notes.ts";

let ada: RegisteredUser;
let bob: RegisteredUser;
/** Ada's notes by name, in the order she created them. */
const notes: Record<string, Note> = {};

const ids = (list: Note[]) => list.map((note) => note.id);
const idsOf = (...names: string[]) => names.map((name) => notes[name].id);

beforeAll(async () => {
  [ada, bob] = await Promise.all([
    registerUser("filters"),
    registerUser("filters-other"),
  ]);
  // One after the other, so the creation order is the listing's.
  const made: [string, Record<string, unknown>][] = [
    ["groceries", {
      title: "Groceries",
      content: "Eggs, flour and milk",
      status: "PUBLISHED",
    }],
    ["dessert", { title: "Crème brûlée", content: "Vanilla, cream, sugar" }],
    ["plumber", { content: "Call the PLUMBER about the kitchen sink" }],
    ["trip", {
      title: "Trip to Łódź and Zürich",
      content: "Book the Straße hotel",
      status: "PUBLISHED",
    }],
    ["greek", { title: "Λεξικό", content: "Καλημέρα κόσμε" }],
    ["kitchen", {
      title: "Kitchen ideas",
      content: "new sink, milk frother",
      status: "PUBLISHED",
    }],
  ];
  for (const [name, body] of made) notes[name] = await createNote(ada, body);
  // Bob's notes hold Ada's words too: a search must never find them for her.
  await createNote(bob, { title: "Groceries", content: "eggs and milk" });
  await createNote(bob, { title: "Crème", content: "brûlée" });
});

describe("GET /notes-fetch?status=", () => {
  it("lists one status, newest first, with an exact total", async () => {
    const published = await fetchNotes(ada, "status=PUBLISHED");
    expect(ids(published.notes)).toEqual(idsOf("kitchen", "trip", "groceries"));
    expect(published.pagination).toEqual({
      total: 3,
      limit: 10,
      offset: 0,
      hasMore: false,
    });
    const drafts = await fetchNotes(ada, "status=DRAFT&limit=2");
    expect(ids(drafts.notes)).toEqual(idsOf("greek", "plumber"));
    expect(drafts.pagination).toEqual({
      total: 3,
      limit: 2,
      offset: 0,
      hasMore: true,
    });
  });

  it("keeps each status's total exact as notes are published, unpublished, created and deleted", async () => {
    const carol = await registerUser("filters-counts");
    const first = await createNote(carol, { title: "first" });
    const second = await createNote(carol, {
      title: "second",
      status: "PUBLISHED",
    });
    await createNote(carol, { title: "third" });
    const totals = async () => ({
      all: (await fetchNotes(carol)).pagination.total,
      drafts: (await fetchNotes(carol, "status=DRAFT")).pagination.total,
      published: (await fetchNotes(carol, "status=PUBLISHED")).pagination.total,
    });
    expect(await totals()).toEqual({ all: 3, drafts: 2, published: 1 });
    await call("/notes-save", {
      token: carol.accessToken,
      body: { id: first.id, status: "PUBLISHED" },
    });
    expect(await totals()).toEqual({ all: 3, drafts: 1, published: 2 });
    await call("/notes-save", {
      token: carol.accessToken,
      body: { id: second.id, status: "DRAFT" },
    });
    expect(await totals()).toEqual({ all: 3, drafts: 2, published: 1 });
    // A save that names the status a note already has moves no count.
    await call("/notes-save", {
      token: carol.accessToken,
      body: { id: second.id, status: "DRAFT", title: "2nd" },
    });
    expect(await totals()).toEqual({ all: 3, drafts: 2, published: 1 });
    await call(`/notes-delete?id=${first.id}`, {
      token: carol.accessToken,
      method: "DELETE",
    });
    expect(await totals()).toEqual({ all: 2, drafts: 2, published: 0 });
  });
});

describe("GET /notes-fetch?order=updatedAt", () => {
  it("lists the last edited first, and createdAt stays the default", async () => {
    const dan = await registerUser("filters-order");
    const older = await createNote(dan, { title: "older" });
    const newer = await createNote(dan, { title: "newer" });
    await call("/notes-save", {
      token: dan.accessToken,
      body: { id: older.id, content: "edited" },
    });
    expect(ids((await fetchNotes(dan, "order=updatedAt")).notes)).toEqual([
      older.id,
      newer.id,
    ]);
    expect(ids((await fetchNotes(dan)).notes)).toEqual([newer.id, older.id]);
    expect(ids((await fetchNotes(dan, "order=createdAt")).notes)).toEqual([
      newer.id,
      older.id,
    ]);
  });
});

describe("GET /notes-fetch?q=", () => {
  it.each([
    ["a word of the title", "groceries", ["groceries"]],
    ["a word of the content, in any case", "plumber", ["plumber"]],
    ["every word, in any order, across title and content", "milk eggs", [
      "groceries",
    ]],
    ["words that only together narrow it down", "sink milk", ["kitchen"]],
    ["the start of a word", "kitch", ["kitchen", "plumber"]],
    ["a word with diacritics, written without them", "creme brulee", [
      "dessert",
    ]],
    ["a word with diacritics, written with them in capitals", "CRÈME", [
      "dessert",
    ]],
    ["Polish and German letters", "lodz strasse", ["trip"]],
    ["ß written as ss", "STRASSE", ["trip"]],
    ["a Greek word, in capitals and without its accent", "ΚΑΛΗΜΕΡΑ", ["greek"]],
    ["a word no note holds", "tractor", []],
    ["a word only another user's note holds", "frother cream", []],
  ])("finds %s (%s)", async (_case, q, expected) => {
    const list = await fetchNotes(ada, `q=${encodeURIComponent(q)}&limit=100`);
    expect(ids(list.notes)).toEqual(idsOf(...expected));
    expect(list.pagination.total).toBe(expected.length);
  });

  it("never finds another user's notes, even for their exact words", async () => {
    const list = await fetchNotes(bob, "q=kitchen");
    expect(list.notes).toEqual([]);
    expect((await fetchNotes(bob, "q=eggs")).pagination.total).toBe(1);
  });

  it("treats quotes, backslashes and query syntax in q as plain words", async () => {
    for (const q of ["it's", "a\\b", "milk & !eggs | (", ":*", "'"]) {
      const response = await call(`/notes-fetch?q=${encodeURIComponent(q)}`, {
        token: ada.accessToken,
      });
      expect(response.status, `${q}: ${response.text}`).toBe(200);
    }
    expect(
      ids(
        (await fetchNotes(ada, `q=${encodeURIComponent("milk & !eggs")}`))
          .notes,
      ),
    ).toEqual(
      idsOf("groceries"),
    );
  });
});

describe("filters together", () => {
  it("combine with each other and with paging, and the total counts exactly what matches", async () => {
    const milk = await fetchNotes(ada, "q=milk&status=PUBLISHED&limit=1");
    expect(ids(milk.notes)).toEqual(idsOf("kitchen"));
    expect(milk.pagination).toEqual({
      total: 2,
      limit: 1,
      offset: 0,
      hasMore: true,
    });
    const next = await fetchNotes(
      ada,
      "q=milk&status=PUBLISHED&limit=1&offset=1",
    );
    expect(ids(next.notes)).toEqual(idsOf("groceries"));
    expect(next.pagination.hasMore).toBe(false);
    expect((await fetchNotes(ada, "q=milk&status=DRAFT")).pagination.total)
      .toBe(0);

    await call("/notes-save", {
      token: ada.accessToken,
      body: { id: notes.groceries.id, content: "Eggs and milk!" },
    });
    const edited = await fetchNotes(ada, "status=PUBLISHED&order=updatedAt");
    expect(ids(edited.notes)).toEqual(idsOf("groceries", "kitchen", "trip"));
    expect(ids((await fetchNotes(ada, "q=milk&order=updatedAt")).notes))
      .toEqual(idsOf("groceries", "kitchen"));
  });
});

describe("bad filters", () => {
  it.each([
    ["status", "status=ARCHIVED"],
    ["status", "status=draft"],
    ["order", "order=title"],
    ["order", "order="],
    ["q", "q="],
    ["q", "q=%20%20"],
    ["q", `q=${"a".repeat(201)}`],
    ["sort", "sort=createdAt"],
    ["tag", "limit=5&tag=work"],
    ["status", "status=DRAFT&status=PUBLISHED"],
  ])("answer 400 naming %s (%s)", async (parameter, query) => {
    const response = await call(`/notes-fetch?${query}`, {
      token: ada.accessToken,
    });
    expect(expectNotesError(response, 400)).toMatch(
      new RegExp(`^${parameter} `),
    );
    expect(
      (response.body as { fields: { field: string }[] }).fields.map((
        { field },
      ) => field),
    ).toContain(parameter);
  });

  it("accepts a q of exactly 200 characters, and Supabase's forceFunctionRegion routing parameter", async () => {
    expect((await fetchNotes(ada, `q=${"a".repeat(200)}`)).notes).toEqual([]);
    expect(
      (await fetchNotes(ada, "forceFunctionRegion=eu-central-1&limit=1")).notes,
    ).toHaveLength(1);
  });
});
