/**
 * Races on the shared stack: many requests on one note at once. (Concurrent
 * registers of one email are raced in auth-register.test.ts.) On PGlite the
 * stack's single connection serialises them; on PostgreSQL they truly overlap.
 */
import { describe, expect, it } from "vitest";
import { call, registerUser } from "./support/api.ts";
import { createNote, expectNotesError, fetchNotes, noteEnvelope } from "./support/notes.ts";

const racers = 12;

describe("concurrent requests on one note", () => {
  it("saves: each answer is a complete Note its own request wrote, and the stored row is one of them", async () => {
    const user = await registerUser("race-save");
    const note = await createNote(user, { title: "start", content: "start" });
    const writes = Array.from({ length: racers }, (_, index) => ({
      id: note.id,
      title: `title ${index}`,
      content: `content ${index}`,
      status: index % 2 === 0 ? "PUBLISHED" : "DRAFT",
    }));
    const answers = await Promise.all(
      writes.map((body) => call("/notes-save", { token: user.accessToken, body })),
    );
    const saved = answers.map((answer, index) => {
      expect(answer.status, answer.text).toBe(200);
      const written = noteEnvelope.parse(answer.body).data;
      // All three fields from the same request: no answer mixes two writes.
      expect(written).toMatchObject({ ...writes[index], createdBy: user.id, createdAt: note.createdAt });
      return written;
    });
    const [stored] = (await fetchNotes(user)).notes;
    expect(saved).toContainEqual(stored);
  });

  it("deletes: exactly one answers 200, the rest 404", async () => {
    const user = await registerUser("race-delete");
    const note = await createNote(user, { title: "delete me" });
    const answers = await Promise.all(
      Array.from(
        { length: racers },
        () => call(`/notes-delete?id=${note.id}`, { token: user.accessToken, method: "DELETE" }),
      ),
    );
    const winners = answers.filter((answer) => answer.status === 200);
    expect(winners).toHaveLength(1);
    expect(winners[0].body).toMatchObject({ success: true, data: { id: note.id } });
    for (const loser of answers.filter((answer) => answer.status !== 200)) {
      expect(expectNotesError(loser, 404)).toBe("Note not found");
    }
    expect((await fetchNotes(user)).notes).toEqual([]);
  });
});
