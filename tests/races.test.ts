/**
 * Races on the shared stack: many requests on one note, or on one user's
 * notes, at once. (Concurrent registers of one email are raced in
 * auth-register.test.ts.) On PGlite the stack's single connection serialises
 * them; on PostgreSQL they truly overlap.
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

  it("keeps a user's total exact while creates and deletes of their notes overlap", async () => {
    const user = await registerUser("race-total");
    const existing = await Promise.all(
      Array.from({ length: 20 }, (_, index) => createNote(user, { title: `old ${index}` })),
    );
    const doomed = existing.slice(0, 15);
    const answers = await Promise.all([
      ...Array.from(
        { length: 20 },
        (_, index) => call("/notes-create", { token: user.accessToken, body: { title: `new ${index}` } }),
      ),
      // Each doomed note is deleted twice at once: one delete wins, the other finds nothing.
      ...[...doomed, ...doomed].map((note) =>
        call(`/notes-delete?id=${note.id}`, { token: user.accessToken, method: "DELETE" })
      ),
    ]);
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(20);
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(15);
    expect(answers.filter((answer) => answer.status === 404)).toHaveLength(15);
    const listing = await fetchNotes(user, "limit=100");
    expect(listing.notes).toHaveLength(20 + 20 - 15);
    expect(listing.pagination.total).toBe(20 + 20 - 15);
    // A page past the end still carries the exact total.
    expect((await fetchNotes(user, "limit=10&offset=100")).pagination).toMatchObject({ total: 25, hasMore: false });
  });
});
