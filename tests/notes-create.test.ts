import { beforeAll, describe, expect, it } from "vitest";
import { limits, titleOrContentRequired } from "../supabase/functions/_shared/contract/mod.ts";
import { call, type RegisteredUser, registerUser } from "./support/api.ts";
import { allNotes, createNote, expectNotesError, noteEnvelope } from "./support/notes.ts";

let ada: RegisteredUser;

beforeAll(async () => {
  ada = await registerUser("create");
});

describe("POST /notes-create", () => {
  it('answers 201 with the new Note, owned by the caller, as a DRAFT with "" for the omitted content', async () => {
    const response = await call("/notes-create", { token: ada.accessToken, body: { title: "Groceries" } });
    expect(response.status, response.text).toBe(201);
    const envelope = noteEnvelope.strict().parse(response.body);
    expect(envelope.message).toMatch(/created/i);
    expect(envelope.data).toMatchObject({ title: "Groceries", content: "", status: "DRAFT", createdBy: ada.id });
    expect(envelope.data.updatedAt).toBe(envelope.data.createdAt);
    expect(await allNotes(ada)).toContainEqual(envelope.data);
  });

  it('stores content alone with title "" and keeps a given status', async () => {
    const note = await createNote(ada, { content: "milk, eggs", status: "PUBLISHED" });
    expect(note).toMatchObject({ title: "", content: "milk, eggs", status: "PUBLISHED" });
  });

  it("takes the owner from the token, never from the body", async () => {
    const other = await registerUser("create-other");
    const note = await createNote(ada, { title: "Mine", createdBy: other.id });
    expect(note.createdBy).toBe(ada.id);
    expect((await allNotes(other)).map((listed) => listed.id)).not.toContain(note.id);
  });

  it.each([
    ["no field", {}],
    ["both empty", { title: "", content: "" }],
    ["only a status", { status: "PUBLISHED" }],
  ])("rejects a note with neither title nor content (%s) with 400", async (_case, body) => {
    const before = (await allNotes(ada)).length;
    const response = await call("/notes-create", { token: ada.accessToken, body });
    expect(expectNotesError(response, 400)).toBe(titleOrContentRequired);
    expect(await allNotes(ada)).toHaveLength(before);
  });

  it("accepts a title of exactly the maximum length and rejects one character more, naming title", async () => {
    const longest = "t".repeat(limits.titleMaxChars);
    expect((await createNote(ada, { title: longest })).title).toBe(longest);
    const response = await call("/notes-create", { token: ada.accessToken, body: { title: `${longest}t` } });
    expect(expectNotesError(response, 400)).toMatch(/^title .*1000/);
  });

  it("accepts content of exactly the maximum length and rejects one character more, naming content", async () => {
    const longest = "c".repeat(limits.contentMaxChars);
    expect((await createNote(ada, { content: longest })).content).toBe(longest);
    const response = await call("/notes-create", { token: ada.accessToken, body: { content: `${longest}c` } });
    expect(expectNotesError(response, 400)).toMatch(/^content .*100000/);
  });

  it.each([
    ["an unknown status", { title: "x", status: "ARCHIVED" }, /^status/],
    ["a status in lower case", { title: "x", status: "draft" }, /^status/],
    ["a title that is not a string", { title: 42 }, /^title must be a string/],
    ["content that is not a string", { title: "x", content: ["a"] }, /^content must be a string/],
    ["a NUL character in the title", { title: "a\u0000b" }, /^title must not contain NUL/],
  ])("rejects %s with 400 naming the field", async (_case, body, message) => {
    const response = await call("/notes-create", { token: ada.accessToken, body });
    expect(expectNotesError(response, 400)).toMatch(message);
  });

  it("rejects malformed JSON and a JSON body that is not an object with 400", async () => {
    for (const body of ['{"title": ', '["title"]', "null"]) {
      expectNotesError(await call("/notes-create", { token: ada.accessToken, body }), 400);
    }
  });

  it("rejects a body that is not declared as JSON with 415", async () => {
    const response = await call("/notes-create", {
      token: ada.accessToken,
      body: JSON.stringify({ title: "x" }),
      headers: { "Content-Type": "text/plain" },
    });
    expectNotesError(response, 415);
  });

  it("rejects a body over 1 MiB with 413 and stores nothing", async () => {
    const before = (await allNotes(ada)).length;
    const response = await call("/notes-create", {
      token: ada.accessToken,
      body: { content: "x".repeat(limits.bodyMaxBytes) },
    });
    expect(expectNotesError(response, 413)).toMatch(/at most/);
    expect(await allNotes(ada)).toHaveLength(before);
  });
});
