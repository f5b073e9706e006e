/**
 * Reading one note, and versioned saves and deletes: a client names the
 * `updatedAt` it last saw as `expectedUpdatedAt`, and a note that has moved on
 * since is left alone with a 409 carrying the stored note. Versions never
 * repeat, even for two updates in one millisecond.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Note, noteConflictCode, notesErrorEnvelope } from "../supabase/functions/_shared/contract/mod.ts";
import { type ApiResponse, call, type RegisteredUser, registerUser } from "./support/api.ts";
import { openTestDatabase, type TestDatabase } from "./support/database.ts";
import { createNote, expectNotesError, noteEnvelope } from "./support/notes.ts";

let ada: RegisteredUser;
let bob: RegisteredUser;

beforeAll(async () => {
  [ada, bob] = await Promise.all([registerUser("versions-ada"), registerUser("versions-bob")]);
});

const getNote = (user: RegisteredUser, id: string) => call(`/notes-get?id=${id}`, { token: user.accessToken });
const save = (user: RegisteredUser, body: Record<string, unknown>) =>
  call("/notes-save", { token: user.accessToken, body });
const remove = (user: RegisteredUser, query: string) =>
  call(`/notes-delete?${query}`, { token: user.accessToken, method: "DELETE" });
const stored = async (user: RegisteredUser, id: string) => noteEnvelope.parse((await getNote(user, id)).body).data;

/** Asserts a 409 `note_conflict` and returns the stored note it carries. */
function expectConflict(response: ApiResponse): Note {
  expect(response.status, response.text).toBe(409);
  const envelope = notesErrorEnvelope.strict().parse(response.body);
  expect(envelope.code).toBe(noteConflictCode);
  expect(envelope.note, "a conflict carries the stored note").toBeDefined();
  return envelope.note as Note;
}

describe("GET /notes-get", () => {
  it("answers one of the caller's notes as it is stored now", async () => {
    const created = await createNote(ada, { title: "Deep link", content: "opened by id" });
    const saved = noteEnvelope.parse((await save(ada, { id: created.id, status: "PUBLISHED" })).body).data;
    const response = await getNote(ada, created.id);
    expect(response.status, response.text).toBe(200);
    expect(noteEnvelope.strict().parse(response.body).data).toEqual(saved);
  });

  it("answers 404 for another user's note, a missing note and a malformed id alike", async () => {
    const adas = await createNote(ada, { title: "Ada's" });
    for (const id of [adas.id, "00000000-0000-4000-8000-000000000000", "not-a-uuid", ""]) {
      expect(expectNotesError(await getNote(bob, id), 404)).toBe("Note not found");
    }
    expect(expectNotesError(await call("/notes-get", { token: ada.accessToken }), 400)).toMatch(/^id is required/);
  });
});

describe("POST /notes-save with expectedUpdatedAt", () => {
  it("saves when the version is current and answers a strictly later one", async () => {
    const created = await createNote(ada, { title: "v1" });
    const response = await save(ada, { id: created.id, title: "v2", expectedUpdatedAt: created.updatedAt });
    expect(response.status, response.text).toBe(200);
    const saved = noteEnvelope.parse(response.body).data;
    expect(saved.title).toBe("v2");
    expect(saved.updatedAt > created.updatedAt).toBe(true);
  });

  it("refuses a stale save with 409 and the stored note, and changes nothing", async () => {
    const created = await createNote(ada, { title: "start", content: "phone and laptop" });
    const phone = noteEnvelope.parse(
      (await save(ada, { id: created.id, content: "phone's edit", expectedUpdatedAt: created.updatedAt })).body,
    ).data;
    const laptop = await save(ada, { id: created.id, content: "laptop's edit", expectedUpdatedAt: created.updatedAt });
    expect(expectConflict(laptop)).toEqual(phone);
    expect(await stored(ada, created.id)).toEqual(phone);
  });

  it("lets back-to-back saves that each name the version the previous one answered all succeed", async () => {
    let current = await createNote(ada, { title: "chain" });
    const versions = [current.updatedAt];
    for (let step = 1; step <= 10; step++) {
      const response = await save(ada, {
        id: current.id,
        content: `step ${step}`,
        expectedUpdatedAt: current.updatedAt,
      });
      expect(response.status, response.text).toBe(200);
      current = noteEnvelope.parse(response.body).data;
      versions.push(current.updatedAt);
    }
    expect(current.content).toBe("step 10");
    // Strictly increasing, so no two are equal although ten saves fit in a few milliseconds.
    expect([...versions].sort()).toEqual(versions);
    expect(new Set(versions).size).toBe(versions.length);
  });

  it("lets exactly one of 6 concurrent saves naming the same version win", async () => {
    const created = await createNote(ada, { title: "contested" });
    const answers = await Promise.all(
      Array.from(
        { length: 6 },
        (_, index) => save(ada, { id: created.id, content: `writer ${index}`, expectedUpdatedAt: created.updatedAt }),
      ),
    );
    const winners = answers.filter((answer) => answer.status === 200);
    expect(winners, answers.map((answer) => answer.text).join("\n")).toHaveLength(1);
    const winner = noteEnvelope.parse(winners[0].body).data;
    for (const loser of answers.filter((answer) => answer.status !== 200)) {
      expect(expectConflict(loser)).toEqual(winner);
    }
    expect(await stored(ada, created.id)).toEqual(winner);
  });

  it("behaves as before without expectedUpdatedAt: the last save wins", async () => {
    const created = await createNote(ada, { title: "unversioned" });
    await save(ada, { id: created.id, content: "first" });
    const second = await save(ada, { id: created.id, content: "second" });
    expect(noteEnvelope.parse(second.body).data.content).toBe("second");
  });

  it.each([
    ["a date without milliseconds", "2026-01-15T09:30:00Z"],
    ["not a date", "yesterday"],
    ["a number", 1_768_469_400_000],
    ["an offset instead of Z", "2026-01-15T09:30:00.000+01:00"],
  ])("rejects %s as expectedUpdatedAt with 400 naming it", async (_case, expectedUpdatedAt) => {
    const created = await createNote(ada, { title: "untouched" });
    const response = await save(ada, { id: created.id, title: "x", expectedUpdatedAt });
    expect(expectNotesError(response, 400)).toMatch(/^expectedUpdatedAt/);
    expect(await stored(ada, created.id)).toEqual(created);
  });

  it("answers 404, not 409, for another user's note whatever version is named", async () => {
    const adas = await createNote(ada, { title: "Ada's only" });
    const current = await save(bob, { id: adas.id, title: "Bob's", expectedUpdatedAt: adas.updatedAt });
    expect(expectNotesError(current, 404)).toBe("Note not found");
    const stale = await save(bob, { id: adas.id, title: "Bob's", expectedUpdatedAt: "2000-01-01T00:00:00.000Z" });
    expect(expectNotesError(stale, 404)).toBe("Note not found");
  });
});

describe("DELETE /notes-delete with expectedUpdatedAt", () => {
  it("refuses a stale delete with 409 and the stored note, which stays", async () => {
    const created = await createNote(ada, { title: "keep me" });
    const edited = noteEnvelope.parse((await save(ada, { id: created.id, content: "edited elsewhere" })).body).data;
    const response = await remove(ada, `id=${created.id}&expectedUpdatedAt=${created.updatedAt}`);
    expect(expectConflict(response)).toEqual(edited);
    expect(await stored(ada, created.id)).toEqual(edited);
  });

  it("deletes when the version is current", async () => {
    const created = await createNote(ada, { title: "delete me" });
    const response = await remove(ada, `id=${created.id}&expectedUpdatedAt=${created.updatedAt}`);
    expect(response.status, response.text).toBe(200);
    expectNotesError(await getNote(ada, created.id), 404);
  });

  it("rejects a malformed expectedUpdatedAt with 400 naming it", async () => {
    const created = await createNote(ada, { title: "still here" });
    expect(expectNotesError(await remove(ada, `id=${created.id}&expectedUpdatedAt=soon`), 400))
      .toMatch(/^expectedUpdatedAt/);
    expect((await getNote(ada, created.id)).status).toBe(200);
  });
});

describe("versions in the database", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(async () => {
    await database?.close();
  });

  it("gives updates in one millisecond (one transaction, one now()) distinct, increasing versions", async () => {
    const versions = await database.rolledBack(async (query) => {
      const [user] = await query<{ id: string }>(
        "insert into app.users (name, email, password_hash) values ('v', $1, 'x') returning id",
        [`versions-${Date.now()}@example.com`],
      );
      const [note] = await query<{ id: string }>(
        "insert into public.notes (created_by, title) values ($1, 'same instant') returning id",
        [user.id],
      );
      // The version as the API writes it: to the millisecond.
      const read = async () =>
        (await query<{ version: string }>(
          `select to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') as version
           from public.notes where id = $1`,
          [note.id],
        ))[0].version;
      const seen = [await read()];
      for (const content of ["one", "two", "three"]) {
        await query("update public.notes set content = $2 where id = $1", [note.id, content]);
        seen.push(await read());
      }
      return seen;
    });
    expect(new Set(versions).size, versions.join(", ")).toBe(versions.length);
    expect([...versions].sort()).toEqual(versions);
  });
});
