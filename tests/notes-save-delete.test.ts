import { beforeAll, describe, expect, it } from "vitest";
import {
  deletedNote,
  notesSuccessEnvelope,
  titleOrContentRequired,
} from "../supabase/functions/_shared/contract/mod.ts";
import { call, type RegisteredUser, registerUser } from "./support/api.ts";
import { allNotes, createNote, expectNotesError, noteEnvelope } from "./support/notes.ts";

let ada: RegisteredUser;

beforeAll(async () => {
  ada = await registerUser("save");
});

const unknownId = "00000000-0000-4000-8000-000000000000";
const malformedIds = ["not-a-uuid", "123", "00000000-0000-4000-8000-00000000000", "' or 1=1 --", ""];

describe("POST /notes-save", () => {
  it("changes only the fields given, answers with the updated Note and keeps it", async () => {
    const created = await createNote(ada, { title: "Draft title", content: "body" });
    const response = await call("/notes-save", { token: ada.accessToken, body: { id: created.id, title: "Final" } });
    expect(response.status, response.text).toBe(200);
    const envelope = noteEnvelope.strict().parse(response.body);
    expect(envelope.message).toMatch(/saved|updated/i);
    const saved = envelope.data;
    expect(saved).toMatchObject({
      id: created.id,
      title: "Final",
      content: "body",
      status: "DRAFT",
      createdBy: ada.id,
      createdAt: created.createdAt,
    });
    expect(Date.parse(saved.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.updatedAt));
    expect(await allNotes(ada)).toContainEqual(saved);
  });

  it("moves a note between DRAFT and PUBLISHED", async () => {
    const created = await createNote(ada, { title: "Status" });
    const published = await call("/notes-save", {
      token: ada.accessToken,
      body: { id: created.id, status: "PUBLISHED" },
    });
    expect(noteEnvelope.parse(published.body).data).toMatchObject({ status: "PUBLISHED", title: "Status" });
    const drafted = await call("/notes-save", { token: ada.accessToken, body: { id: created.id, status: "DRAFT" } });
    expect(noteEnvelope.parse(drafted.body).data.status).toBe("DRAFT");
  });

  it("may empty one field while the other still has text", async () => {
    const created = await createNote(ada, { title: "Keep", content: "drop" });
    const response = await call("/notes-save", { token: ada.accessToken, body: { id: created.id, content: "" } });
    expect(noteEnvelope.parse(response.body).data).toMatchObject({ title: "Keep", content: "" });
  });

  it.each([
    ["the only field with text", (id: string) => ({ id, title: "" })],
    ["both fields", (id: string) => ({ id, title: "", content: "" })],
  ])("rejects an update that empties %s with 400 and leaves the note as it was", async (_case, body) => {
    const created = await createNote(ada, { title: "Only a title" });
    const response = await call("/notes-save", { token: ada.accessToken, body: body(created.id) });
    expect(expectNotesError(response, 400)).toBe(titleOrContentRequired);
    expect(await allNotes(ada)).toContainEqual(created);
  });

  it("rejects a body with only the id with 400", async () => {
    const created = await createNote(ada, { title: "Untouched" });
    const response = await call("/notes-save", { token: ada.accessToken, body: { id: created.id } });
    expect(expectNotesError(response, 400)).toMatch(/title, content or status/);
  });

  it.each([
    ["no id", { title: "x" }, /^id is required/],
    ["an id that is not a string", { id: 7, title: "x" }, /^id must be a string/],
    ["an unknown status", { id: unknownId, status: "DONE" }, /^status/],
    ["a title one character too long", { id: unknownId, title: "t".repeat(1001) }, /^title/],
    ["content one character too long", { id: unknownId, content: "c".repeat(100_001) }, /^content/],
  ])("rejects %s with 400 naming the field", async (_case, body, message) => {
    const response = await call("/notes-save", { token: ada.accessToken, body });
    expect(expectNotesError(response, 400)).toMatch(message);
  });

  it("answers 404 for an id that names no note", async () => {
    const response = await call("/notes-save", { token: ada.accessToken, body: { id: unknownId, title: "x" } });
    expect(expectNotesError(response, 404)).toBe("Note not found");
  });

  it.each(malformedIds)("answers 404 for the malformed id %j", async (id) => {
    const response = await call("/notes-save", { token: ada.accessToken, body: { id, title: "x" } });
    expect(expectNotesError(response, 404)).toBe("Note not found");
  });
});

describe("DELETE /notes-delete", () => {
  it("deletes the note, answers with its id, and it is no longer listed", async () => {
    const created = await createNote(ada, { title: "Short-lived" });
    const response = await call(`/notes-delete?id=${created.id}`, { token: ada.accessToken, method: "DELETE" });
    expect(response.status, response.text).toBe(200);
    const envelope = notesSuccessEnvelope(deletedNote.strict()).strict().parse(response.body);
    expect(envelope.message).toMatch(/deleted/i);
    expect(envelope.data).toEqual({ id: created.id });
    expect((await allNotes(ada)).map((note) => note.id)).not.toContain(created.id);
  });

  it("answers 404 when the same note is deleted twice", async () => {
    const created = await createNote(ada, { title: "Twice" });
    await call(`/notes-delete?id=${created.id}`, { token: ada.accessToken, method: "DELETE" });
    const again = await call(`/notes-delete?id=${created.id}`, { token: ada.accessToken, method: "DELETE" });
    expect(expectNotesError(again, 404)).toBe("Note not found");
  });

  it("answers 404 for an id that names no note", async () => {
    const response = await call(`/notes-delete?id=${unknownId}`, { token: ada.accessToken, method: "DELETE" });
    expectNotesError(response, 404);
  });

  it.each(malformedIds)("answers 404 for the malformed id %j and deletes nothing", async (id) => {
    const kept = await createNote(ada, { title: "Kept" });
    const response = await call(`/notes-delete?id=${encodeURIComponent(id)}`, {
      token: ada.accessToken,
      method: "DELETE",
    });
    expect(expectNotesError(response, 404)).toBe("Note not found");
    expect(await allNotes(ada)).toContainEqual(kept);
  });

  it("rejects a missing id, or one given twice, with 400 naming id", async () => {
    const missing = await call("/notes-delete", { token: ada.accessToken, method: "DELETE" });
    expect(expectNotesError(missing, 400)).toMatch(/^id is required/);
    const twice = await call(`/notes-delete?id=${unknownId}&id=${unknownId}`, {
      token: ada.accessToken,
      method: "DELETE",
    });
    expect(expectNotesError(twice, 400)).toMatch(/^id must be given once/);
  });
});
