import { beforeAll, describe, expect, it } from "vitest";
import type { Note } from "../supabase/functions/_shared/contract/mod.ts";
import { call, type RegisteredUser, registerUser } from "./support/api.ts";
import { allNotes, createNote, expectNotesError, fetchNotes, noteEnvelope } from "./support/notes.ts";

// Ada owns notes; Bob is signed in with his own valid token and tries to reach them.
let ada: RegisteredUser;
let bob: RegisteredUser;
let adasNote: Note;
let bobsNote: Note;

beforeAll(async () => {
  [ada, bob] = await Promise.all([registerUser("owner-a"), registerUser("owner-b")]);
  adasNote = await createNote(ada, { title: "Ada's secret", content: "only for Ada" });
  await createNote(ada, { title: "Ada's second" });
  bobsNote = await createNote(bob, { title: "Bob's own" });
});

describe("one user cannot reach another's notes", () => {
  it("lists and counts only the caller's own notes", async () => {
    const bobsList = await fetchNotes(bob);
    expect(bobsList.notes).toEqual([bobsNote]);
    expect(bobsList.pagination.total).toBe(1);
    expect(bobsList.userId).toBe(bob.id);
    const adasList = await fetchNotes(ada);
    expect(adasList.pagination.total).toBe(2);
    expect(adasList.notes.every((note) => note.createdBy === ada.id)).toBe(true);
  });

  it("answers 404 when B saves A's note, and A's note is unchanged", async () => {
    for (const body of [{ title: "Bob was here" }, { content: "" }, { status: "PUBLISHED" }]) {
      const response = await call("/notes-save", { token: bob.accessToken, body: { id: adasNote.id, ...body } });
      expect(expectNotesError(response, 404)).toBe("Note not found");
    }
    expect(await allNotes(ada)).toContainEqual(adasNote);
  });

  it("answers 404 when B deletes A's note, and A still has it", async () => {
    const response = await call(`/notes-delete?id=${adasNote.id}`, { token: bob.accessToken, method: "DELETE" });
    expect(expectNotesError(response, 404)).toBe("Note not found");
    expect(await allNotes(ada)).toContainEqual(adasNote);
  });

  it("gives B the same 404 for A's note as for a note that does not exist", async () => {
    const forAdas = await call("/notes-save", { token: bob.accessToken, body: { id: adasNote.id, title: "x" } });
    const forNone = await call("/notes-save", {
      token: bob.accessToken,
      body: { id: "00000000-0000-4000-8000-000000000000", title: "x" },
    });
    expect(forAdas.status).toBe(forNone.status);
    expect(forAdas.body).toEqual(forNone.body);
  });

  it("does not let a body hand a note to someone else", async () => {
    const response = await call("/notes-save", {
      token: bob.accessToken,
      body: { id: bobsNote.id, title: "Still Bob's", createdBy: ada.id },
    });
    expect(response.status, response.text).toBe(200);
    expect(noteEnvelope.parse(response.body).data.createdBy).toBe(bob.id);
    expect((await allNotes(ada)).map((note) => note.id)).not.toContain(bobsNote.id);
  });
});
