/**
 * Idempotent creates: `POST /notes-create` with an `Idempotency-Key` makes
 * its note once, however often, and however concurrently, it is repeated with
 * the same body; the same key with another body is a 422; keys are the user's
 * own and last 24 hours. (A create whose answer is lost after its COMMIT,
 * retried with its key, is in outages.test.ts.)
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idempotencyKeyReusedCode, notesErrorEnvelope } from "../supabase/functions/_shared/contract/mod.ts";
import { call, type RegisteredUser, registerUser } from "./support/api.ts";
import { allNotes, expectNotesError, noteEnvelope } from "./support/notes.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";

let ada: RegisteredUser;
let bob: RegisteredUser;

beforeAll(async () => {
  [ada, bob] = await Promise.all([registerUser("keys-ada"), registerUser("keys-bob")]);
});

const createWithKey = (user: RegisteredUser, key: string, body: Record<string, unknown>) =>
  call("/notes-create", { token: user.accessToken, body, headers: { "Idempotency-Key": key } });

/** How many of `user`'s notes have `title`. */
async function countTitled(user: RegisteredUser, title: string): Promise<number> {
  return (await allNotes(user)).filter((note) => note.title === title).length;
}

describe("POST /notes-create with an Idempotency-Key", () => {
  it("answers a retry with the same 201 and the same note, and makes one note", async () => {
    const key = randomUUID();
    const first = await createWithKey(ada, key, { title: "retried", content: "once" });
    expect(first.status, first.text).toBe(201);
    const made = noteEnvelope.strict().parse(first.body).data;
    for (let retry = 0; retry < 3; retry++) {
      const again = await createWithKey(ada, key, { title: "retried", content: "once" });
      expect(again.status, again.text).toBe(201);
      expect(noteEnvelope.strict().parse(again.body).data).toEqual(made);
    }
    expect(await countTitled(ada, "retried")).toBe(1);
  });

  it("makes one note from 8 concurrent creates with one key, and answers each with it", async () => {
    const key = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => createWithKey(ada, key, { title: "raced", status: "PUBLISHED" })),
    );
    const ids = answers.map((answer) => {
      expect(answer.status, answer.text).toBe(201);
      return noteEnvelope.parse(answer.body).data.id;
    });
    expect(new Set(ids).size).toBe(1);
    expect(await countTitled(ada, "raced")).toBe(1);
  });

  it("refuses the key with a different body with 422 and makes nothing", async () => {
    const key = randomUUID();
    expect((await createWithKey(ada, key, { title: "original" })).status).toBe(201);
    const reused = await createWithKey(ada, key, { title: "something else" });
    expectNotesError(reused, 422);
    expect(notesErrorEnvelope.parse(reused.body).code).toBe(idempotencyKeyReusedCode);
    expect(await countTitled(ada, "something else")).toBe(0);
  });

  it("counts the status default as part of the body: omitted and DRAFT are the same create", async () => {
    const key = randomUUID();
    const first = noteEnvelope.parse((await createWithKey(ada, key, { title: "defaulted" })).body).data;
    const again = await createWithKey(ada, key, { title: "defaulted", status: "DRAFT" });
    expect(noteEnvelope.parse(again.body).data).toEqual(first);
    expectNotesError(await createWithKey(ada, key, { title: "defaulted", status: "PUBLISHED" }), 422);
  });

  it("keeps keys to their user: another user's identical key makes that user's own note", async () => {
    const key = randomUUID();
    const adas = noteEnvelope.parse((await createWithKey(ada, key, { title: "shared key" })).body).data;
    const bobs = await createWithKey(bob, key, { title: "shared key" });
    expect(bobs.status, bobs.text).toBe(201);
    const bobsNote = noteEnvelope.parse(bobs.body).data;
    expect(bobsNote.id).not.toBe(adas.id);
    expect(bobsNote.createdBy).toBe(bob.id);
    expect(await countTitled(bob, "shared key")).toBe(1);
    expect(await countTitled(ada, "shared key")).toBe(1);
  });

  it("answers the note as first made even after it was edited", async () => {
    const key = randomUUID();
    const made = noteEnvelope.parse((await createWithKey(ada, key, { title: "as made" })).body).data;
    await call("/notes-save", { token: ada.accessToken, body: { id: made.id, title: "edited since" } });
    const again = await createWithKey(ada, key, { title: "as made" });
    expect(noteEnvelope.parse(again.body).data).toEqual(made);
  });

  it.each([
    ["empty", ""],
    ["256 characters", "k".repeat(256)],
    ["a space", "two words"],
    ["non-ASCII", "clé"],
  ])("rejects a key that is %s with 400 naming the header, and makes nothing", async (_case, key) => {
    const title = `bad key ${randomUUID()}`;
    const response = await call("/notes-create", {
      token: ada.accessToken,
      body: { title },
      // fetch refuses non-ASCII header values, so the test sends the UTF-8 bytes as Latin-1, as a raw client would.
      headers: { "Idempotency-Key": Buffer.from(key, "utf8").toString("latin1") },
    });
    expect(expectNotesError(response, 400)).toMatch(/^Idempotency-Key/);
    expect(notesErrorEnvelope.parse(response.body).fields).toEqual([
      expect.objectContaining({ field: "Idempotency-Key" }),
    ]);
    expect(await countTitled(ada, title)).toBe(0);
  });

  it("accepts a key of 255 visible ASCII characters", async () => {
    const key = `${randomUUID()}!~`.padEnd(255, "x");
    expect((await createWithKey(ada, key, { title: "long key" })).status).toBe(201);
    expect((await createWithKey(ada, key, { title: "long key" })).status).toBe(201);
    expect(await countTitled(ada, "long key")).toBe(1);
  });

  it("creates a new note each time without a key, as before", async () => {
    for (let i = 0; i < 2; i++) {
      expect((await call("/notes-create", { token: ada.accessToken, body: { title: "no key" } })).status).toBe(201);
    }
    expect(await countTitled(ada, "no key")).toBe(2);
  });
});

describe("the 24-hour window of a key", () => {
  // A stack of its own, whose database the test reaches on PGlite too, to age a key instead of waiting a day.
  let stack: ScratchStack;
  let carol: RegisteredUser;
  beforeAll(async () => {
    stack = await startScratchStack("create-keys");
    carol = await registerUser("keys-carol", { baseUrl: stack.baseUrl });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const createOnStack = (key: string) =>
    stack.call("/notes-create", {
      token: carol.accessToken,
      body: { title: "expiring" },
      headers: { "Idempotency-Key": key },
    });

  it("lets a key used more than 24 hours ago make a new note", async () => {
    const key = randomUUID();
    const first = noteEnvelope.parse((await createOnStack(key)).body).data;
    await stack
      .sql`update app.note_create_keys set created_at = now() - interval '24 hours 1 second' where key = ${key}`;
    const later = await createOnStack(key);
    expect(later.status, later.text).toBe(201);
    expect(noteEnvelope.parse(later.body).data.id).not.toBe(first.id);
    const [{ notes }] = await stack.sql`select count(*)::int as notes from public.notes where created_by = ${carol.id}`;
    expect(notes).toBe(2);
  });

  it("prunes keys expired for an hour on the service's schedule, and keeps unexpired ones", async () => {
    const [stale, fresh] = [randomUUID(), randomUUID()];
    for (const key of [stale, fresh]) expect((await createOnStack(key)).status).toBe(201);
    await stack
      .sql`update app.note_create_keys set created_at = now() - interval '25 hours 1 second' where key = ${stale}`;
    const deadline = Date.now() + 10_000;
    let left: string[] = [];
    do {
      await new Promise((resolve) => setTimeout(resolve, 250));
      left = (await stack.sql<{ key: string }[]>`
        select key from app.note_create_keys where key in (${stale}, ${fresh})`).map((row) => row.key);
    } while (left.includes(stale) && Date.now() < deadline);
    expect(left).toEqual([fresh]);
  });
});
