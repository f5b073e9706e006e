import { connect } from "node:net";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { limits, titleOrContentRequired } from "../supabase/functions/_shared/contract/mod.ts";
import { anonKey, call, type RegisteredUser, registerUser } from "./support/api.ts";
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

  // The body's first part leaves at once and its last a moment later, as from a slow uplink. A server that answered
  // 413 and closed with those last bytes unread would reset the connection: their write fails (EPIPE), and fetch, in
  // one run of ten, reported "fetch failed" instead of the 413.
  it.each(
    [
      ["by its declared length, before reading it", "length"],
      ["once more than 1 MiB of a chunked body has arrived", "chunked"],
    ] as const,
  )(
    "takes the rest of a body refused %s before answering 413, so a client still sending gets it, not a reset",
    async (_, framing) => {
      const oversized = Buffer.alloc(limits.bodyMaxBytes + 4096, "x");
      const chunk = (bytes: Buffer) =>
        Buffer.concat([Buffer.from(`${bytes.byteLength.toString(16)}\r\n`), bytes, Buffer.from("\r\n")]);
      const [first, last] = framing === "length"
        ? [oversized.subarray(0, 64 * 1024), oversized.subarray(64 * 1024)]
        : [chunk(oversized), Buffer.concat([chunk(Buffer.alloc(64 * 1024, "x")), Buffer.from("0\r\n\r\n")])];
      const { hostname, port, pathname } = new URL(`${inject("baseUrl")}/notes-create`);
      const socket = connect(Number(port), hostname);
      let answer = "";
      socket.on("data", (received) => answer += received.toString());
      const closed = new Promise((resolve) => socket.on("close", resolve));
      const lastWrite = new Promise<string>((resolve) => {
        socket.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
        socket.on("connect", () => {
          socket.write(
            `POST ${pathname} HTTP/1.1\r\nHost: ${hostname}\r\napikey: ${anonKey}\r\n` +
              `Authorization: Bearer ${ada.accessToken}\r\nContent-Type: application/json\r\nConnection: close\r\n` +
              (framing === "length"
                ? `Content-Length: ${oversized.byteLength}\r\n\r\n`
                : "Transfer-Encoding: chunked\r\n\r\n"),
          );
          socket.write(first);
          setTimeout(() => socket.write(last, (error) => resolve(error ? "failed" : "sent")), 300);
        });
      });
      expect(await lastWrite).toBe("sent");
      await closed;
      expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    },
  );
});
