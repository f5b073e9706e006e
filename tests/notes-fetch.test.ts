import { beforeAll, describe, expect, it } from "vitest";
import type { Note } from "../supabase/functions/_shared/contract/mod.ts";
import { call, type RegisteredUser, registerUser } from "./support/api.ts";
import { allNotes, createNote, expectNotesError, fetchNotes, noteListEnvelope } from "./support/notes.ts";

let ada: RegisteredUser;
/** Ada's five notes in the order she created them, one request after the other. */
let created: Note[];
/** The same notes as a listing must show them: newest first. */
let newestFirst: string[];

beforeAll(async () => {
  ada = await registerUser("fetch");
  created = [];
  for (const title of ["one", "two", "three", "four", "five"]) created.push(await createNote(ada, { title }));
  newestFirst = created.map((note) => note.id).reverse();
});

const ids = (notes: Note[]) => notes.map((note) => note.id);

describe("GET /notes-fetch", () => {
  it("answers with the caller's notes newest first, the pagination and the caller's id", async () => {
    const response = await call("/notes-fetch", { token: ada.accessToken });
    expect(response.status, response.text).toBe(200);
    const envelope = noteListEnvelope.strict().parse(response.body);
    expect(envelope.message).toMatch(/fetched|retrieved/i);
    expect(envelope.data.userId).toBe(ada.id);
    expect(envelope.data.pagination).toEqual({ total: 5, limit: 10, offset: 0, hasMore: false });
    expect(envelope.data.notes).toEqual([...created].reverse());
  });

  it("lists nothing, with total 0, for a user without notes", async () => {
    const newcomer = await registerUser("fetch-empty");
    const list = await fetchNotes(newcomer);
    expect(list).toEqual({
      notes: [],
      pagination: { total: 0, limit: 10, offset: 0, hasMore: false },
      userId: newcomer.id,
    });
  });

  it.each([
    ["the first page", "limit=2", [0, 2], true],
    ["a middle page", "limit=2&offset=2", [2, 4], true],
    ["a last page that is not full", "limit=2&offset=4", [4, 5], false],
    ["a last page that ends exactly at the last note", "limit=2&offset=3", [3, 5], false],
    ["one page holding exactly every note", "limit=5", [0, 5], false],
    ["a page one short of every note", "limit=4", [0, 4], true],
    ["the largest limit", "limit=100", [0, 5], false],
    ["the smallest limit", "limit=1&offset=4", [4, 5], false],
    ["the page right after the end", "limit=2&offset=5", [5, 5], false],
    ["a page far beyond the end", "offset=1000000", [5, 5], false],
  ])("serves %s (%s)", async (_case, query, [from, to], hasMore) => {
    const params = new URLSearchParams(query);
    const list = await fetchNotes(ada, query);
    expect(ids(list.notes)).toEqual(newestFirst.slice(from, to));
    expect(list.pagination).toEqual({
      total: 5,
      limit: Number(params.get("limit") ?? 10),
      offset: Number(params.get("offset") ?? 0),
      hasMore,
    });
  });

  it("walks every note exactly once, page by page, until hasMore is false", async () => {
    const seen: string[] = [];
    for (let offset = 0;; offset += 2) {
      const page = await fetchNotes(ada, `limit=2&offset=${offset}`);
      seen.push(...ids(page.notes));
      if (!page.pagination.hasMore) break;
    }
    expect(seen).toEqual(newestFirst);
  });

  it.each([
    ["limit", "limit=0"],
    ["limit", "limit=101"],
    ["limit", "limit=-1"],
    ["limit", "limit=2.5"],
    ["limit", "limit=ten"],
    ["limit", "limit="],
    ["limit", "limit=1e1"],
    ["offset", "offset=-1"],
    ["offset", "offset=1.5"],
    ["offset", "offset=abc"],
    ["offset", "offset=99999999999999999999"],
    ["limit", "limit=2&limit=3"],
  ])("rejects a bad %s (%s) with 400 naming it", async (parameter, query) => {
    const response = await call(`/notes-fetch?${query}`, { token: ada.accessToken });
    expect(expectNotesError(response, 400)).toMatch(new RegExp(`^${parameter} `));
  });
});

describe("parallel creates", () => {
  it("all land, each once, and the total counts them", async () => {
    const writer = await registerUser("parallel");
    const titles = Array.from({ length: 25 }, (_, index) => `parallel ${index}`);
    const notes = await Promise.all(titles.map((title) => createNote(writer, { title })));
    expect(new Set(ids(notes)).size).toBe(titles.length);
    const list = await fetchNotes(writer, "limit=100");
    expect(list.pagination.total).toBe(titles.length);
    expect(list.notes.map((note) => note.title).sort()).toEqual([...titles].sort());
    // Whatever order they landed in, the listing is newest first.
    const createdAt = list.notes.map((note) => Date.parse(note.createdAt));
    expect(createdAt).toEqual([...createdAt].sort((a, b) => b - a));
    expect(await allNotes(writer)).toHaveLength(titles.length);
  });
});
