/**
 * Attachments over HTTP on a stack of their own (small limits, a known service role key to look into the store):
 * one's own files up and down, no one else's, the limits before any byte is stored, the type from the bytes, every
 * removal reaching the store, and attachment changes on the changes feed and the live stream. The rules in Postgres
 * alone: supabase/tests/database/attachments.test.sql.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changeList, type Note, note, notesSuccessEnvelope } from "../supabase/functions/_shared/contract/mod.ts";
import { type RegisteredUser, registerUser } from "./support/api.ts";
import { expectNotesError } from "./support/notes.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";
import {
  attachmentListEnvelope,
  downloadEnvelope,
  pngBytes,
  storeOf,
  upload,
  uploadEnvelope,
  uploadSteps,
  utf8,
} from "./support/attachments.ts";
import { openStream } from "../dev/harness/event-stream.ts";
import { testAnonKey } from "../dev/harness/stack.ts";
import { createNotesClient, NotesApiError } from "../shared/index.ts";

const serviceKey = "attachments-test-service-role-key";
const maxBytes = 4096;
const quotaBytes = 16_384;

let stack: ScratchStack;
let store: ReturnType<typeof storeOf>;

beforeAll(async () => {
  stack = await startScratchStack("attachments", {
    env: {
      ATTACHMENT_MAX_BYTES: String(maxBytes),
      ATTACHMENT_QUOTA_BYTES: String(quotaBytes),
      ATTACHMENT_URL_SECONDS: "3",
      SUPABASE_SERVICE_ROLE_KEY: serviceKey,
      SIGNUP_MAX_PER_ADDRESS: "1000",
      BCRYPT_COST: "4",
    },
  });
  store = storeOf(stack.baseUrl, serviceKey);
}, 120_000);
afterAll(() => stack?.stop());

const signUp = (label: string) => registerUser(label, { baseUrl: stack.baseUrl });

async function noteOf(user: RegisteredUser, title = "With files"): Promise<Note> {
  const created = await stack.call("/notes-create", { token: user.accessToken, body: { title } });
  return notesSuccessEnvelope(note).parse(created.body).data;
}

const noteNow = async (user: RegisteredUser, id: string) =>
  notesSuccessEnvelope(note).parse((await stack.call(`/notes-get?id=${id}`, { token: user.accessToken })).body).data;

const listOf = async (user: RegisteredUser, noteId: string) =>
  attachmentListEnvelope.parse(
    (await stack.call(`/attachments-list?noteId=${noteId}`, { token: user.accessToken })).body,
  )
    .data.attachments;

const pathOf = (user: RegisteredUser, id: string) => `${user.id}/${id}`;

describe("one's own attachments", () => {
  it("uploads, lists, downloads and deletes a file; the note counts it, and its object leaves the store", async () => {
    const ada = await signUp("ada");
    const mine = await noteOf(ada);
    const bytes = pngBytes(300);
    const file = await upload(stack.call, ada, mine.id, bytes, { name: "whiteboard.png" });
    expect(file).toMatchObject({ noteId: mine.id, name: "whiteboard.png", type: "image/png", size: 300 });
    expect(await listOf(ada, mine.id)).toEqual([file]);
    expect((await noteNow(ada, mine.id)).attachments).toBe(1);
    // Adding a file is no edit of the note's text: a save naming the version read before still applies.
    expect((await noteNow(ada, mine.id)).updatedAt).toBe(mine.updatedAt);

    const got = await stack.call(`/attachments-get?id=${file.id}`, { token: ada.accessToken });
    const { url } = downloadEnvelope.parse(got.body).data;
    const download = await fetch(url);
    expect(download.status).toBe(200);
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(bytes);
    expect(download.headers.get("content-type")).toBe("image/png");
    expect(download.headers.get("x-content-type-options")).toBe("nosniff");
    // An image is shown inline; anything else is a download (below).
    expect(download.headers.get("content-disposition")).toBeNull();

    const deleted = await stack.call(`/attachments-delete?id=${file.id}`, { method: "DELETE", token: ada.accessToken });
    expect(deleted.status, deleted.text).toBe(200);
    expect(await listOf(ada, mine.id)).toEqual([]);
    expect((await noteNow(ada, mine.id)).attachments).toBe(0);
    await expect.poll(() => store.holds(pathOf(ada, file.id)), { timeout: 10_000 }).toBe(false);
    expectNotesError(await stack.call(`/attachments-get?id=${file.id}`, { token: ada.accessToken }), 404);
  });

  it("removes bytes put again to a deleted file's upload URL, which lives on after the delete", async () => {
    const ada = await signUp("ada");
    const mine = await noteOf(ada);
    const reserved = await stack.call("/attachments-create", {
      token: ada.accessToken,
      body: { noteId: mine.id, name: "again.png", type: "image/png", size: 300 },
    });
    const { attachment, upload: target } = uploadEnvelope.parse(reserved.body).data;
    const put = () => fetch(target.url, { method: target.method, headers: target.headers, body: pngBytes(300) });
    expect((await put()).ok).toBe(true);
    const done = await stack.call("/attachments-complete", { token: ada.accessToken, body: { id: attachment.id } });
    expect(done.status, done.text).toBe(200);
    await stack.call(`/attachments-delete?id=${attachment.id}`, { method: "DELETE", token: ada.accessToken });
    await expect.poll(() => store.holds(pathOf(ada, attachment.id)), { timeout: 10_000 }).toBe(false);

    // The URL still takes bytes (Storage's signed upload URLs are not one-time); no row counts them.
    expect((await put()).ok).toBe(true);
    expect(await store.holds(pathOf(ada, attachment.id))).toBe(true);
    // Its removal stays queued until the URL is dead, so the next attempt (brought forward here) removes them too.
    await stack.sql`update app.attachment_removals set next_attempt_at = now()
                    where object_path = ${pathOf(ada, attachment.id)}`;
    await expect.poll(() => store.holds(pathOf(ada, attachment.id)), { timeout: 10_000 }).toBe(false);
  });

  it("answers 400 for a name with a control character, C1 ones included, which Postgres also refuses", async () => {
    const ada = await signUp("ada");
    const mine = await noteOf(ada);
    for (const name of ["tab\there.png", "next\u0085line.png", "csi\u009b.png"]) {
      const refused = await stack.call("/attachments-create", {
        token: ada.accessToken,
        body: { noteId: mine.id, name, type: "image/png", size: 10 },
      });
      expect(expectNotesError(refused, 400), name).toMatch(/control characters/);
    }
    expect(await listOf(ada, mine.id)).toEqual([]);
  });

  it("serves text as a download, never inline, and refuses an unknown parameter", async () => {
    const ada = await signUp("ada");
    const mine = await noteOf(ada);
    const file = await upload(stack.call, ada, mine.id, utf8("# Groceries\nmilk, eggs\n"), {
      name: "list.md",
      type: "text/markdown",
    });
    const { url } = downloadEnvelope.parse(
      (await stack.call(`/attachments-get?id=${file.id}`, { token: ada.accessToken })).body,
    ).data;
    const download = await fetch(url);
    await download.body?.cancel();
    expect(download.headers.get("content-disposition")).toMatch(/^attachment; filename="list\.md"/);
    expect(download.headers.get("x-content-type-options")).toBe("nosniff");
    const unknown = await stack.call(`/attachments-list?noteId=${mine.id}&all=1`, { token: ada.accessToken });
    expect(expectNotesError(unknown, 400)).toMatch(/all/);
  });
});

describe("someone else's attachments", () => {
  it("cannot be listed, read, deleted, completed or added to, and a signed URL ends with its time", async () => {
    const ada = await signUp("ada");
    const bob = await signUp("bob");
    const adas = await noteOf(ada);
    const file = await upload(stack.call, ada, adas.id, pngBytes());
    const got = await stack.call(`/attachments-get?id=${file.id}`, { token: ada.accessToken });
    const { url } = downloadEnvelope.parse(got.body).data;

    const as = { token: bob.accessToken };
    expect((await stack.call(`/attachments-list?noteId=${adas.id}`, as)).status).toBe(404);
    expect((await stack.call(`/attachments-get?id=${file.id}`, as)).status).toBe(404);
    expect((await stack.call(`/attachments-delete?id=${file.id}`, { ...as, method: "DELETE" })).status).toBe(404);
    expect((await stack.call("/attachments-complete", { ...as, body: { id: file.id } })).status).toBe(404);
    const attach = await uploadSteps(stack.call, bob, adas.id, pngBytes());
    expect(expectNotesError(attach.reserved, 404)).toMatch(/note/i);
    expect(await listOf(ada, adas.id)).toEqual([file]);

    // The URL Ada was given serves the file for ATTACHMENT_URL_SECONDS (3 here), then nothing.
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    const late = await fetch(url);
    await late.body?.cancel();
    expect(late.ok).toBe(false);
  });

  it("gives an anonymous account no attachment: 403 sign_up_required", async () => {
    const started = await stack.call("/auth/anonymous", { method: "POST" });
    const { accessToken } = (started.body as { data: { accessToken: string } }).data;
    const visitor = { id: "", email: "", password: "", accessToken, refreshToken: "" };
    const reserved = (await uploadSteps(stack.call, visitor, (await noteOf(visitor)).id, pngBytes())).reserved;
    expectNotesError(reserved, 403);
    expect((reserved.body as { code: string }).code).toBe("sign_up_required");
  });
});

describe("limits, before any byte is stored", () => {
  it("refuses a file over ATTACHMENT_MAX_BYTES, and bytes past the declared size", async () => {
    const ada = await signUp("ada");
    const mine = await noteOf(ada);
    const tooLarge = await uploadSteps(stack.call, ada, mine.id, pngBytes(maxBytes + 1));
    expectNotesError(tooLarge.reserved, 413);
    expect((tooLarge.reserved.body as { code: string }).code).toBe("attachment_too_large");
    expect(tooLarge.put).toBeUndefined();

    // Declared small, stored larger: refused at completion, and the object removed.
    const lying = await uploadSteps(stack.call, ada, mine.id, pngBytes(2_000), { declaredSize: 100 });
    expect(lying.completed?.status, lying.completed?.text).toBe(413);
    const { id } = uploadEnvelope.parse(lying.reserved.body).data.attachment;
    await expect.poll(() => store.holds(pathOf(ada, id)), { timeout: 10_000 }).toBe(false);
    // The store's bucket refuses more than the largest file outright.
    const put = await uploadSteps(stack.call, ada, mine.id, pngBytes(maxBytes + 500), { declaredSize: 10 });
    expect(put.put?.ok).toBe(false);
    expect(await listOf(ada, mine.id)).toEqual([]);
  });

  it("refuses the file past the account's quota, pending uploads included", async () => {
    const ada = await signUp("ada");
    const [first, second] = [await noteOf(ada), await noteOf(ada)];
    for (let index = 0; index < 3; index++) await upload(stack.call, ada, first.id, pngBytes(4_000));
    // Reserved, never uploaded: it holds its share of the quota until it expires.
    const pending = await stack.call("/attachments-create", {
      token: ada.accessToken,
      body: { noteId: second.id, name: "later.png", type: "image/png", size: 4_000 },
    });
    expect(pending.status).toBe(201);
    const over = await uploadSteps(stack.call, ada, second.id, pngBytes(1_000));
    expectNotesError(over.reserved, 413);
    expect((over.reserved.body as { code: string }).code).toBe("attachment_quota_exceeded");
  });

  it("never lets 10 concurrent uploads pass the quota together, each to a note of its own", async () => {
    const ada = await signUp("ada");
    const notes = await Promise.all(Array.from({ length: 10 }, () => noteOf(ada)));
    const size = 3_000;
    const attempts = await Promise.all(notes.map((mine) => uploadSteps(stack.call, ada, mine.id, pngBytes(size))));
    const reserved = attempts.filter((attempt) => attempt.reserved.status === 201);
    expect(reserved.length).toBe(Math.floor(quotaBytes / size));
    for (const refused of attempts.filter((attempt) => attempt.reserved.status !== 201)) {
      expect((refused.reserved.body as { code: string }).code).toBe("attachment_quota_exceeded");
    }
    const stored = (await Promise.all(notes.map((mine) => listOf(ada, mine.id)))).flat();
    expect(stored.reduce((sum, file) => sum + file.size, 0)).toBeLessThanOrEqual(quotaBytes);
  });

  it("allows 20 files on a note, pending ones included", async () => {
    const ada = await signUp("ada");
    const mine = await noteOf(ada);
    const reserve = (index: number) =>
      stack.call("/attachments-create", {
        token: ada.accessToken,
        body: { noteId: mine.id, name: `${index}.txt`, type: "text/plain", size: 1 },
      });
    for (let index = 0; index < 20; index++) expect((await reserve(index)).status).toBe(201);
    const refused = await reserve(20);
    expectNotesError(refused, 409);
    expect((refused.body as { code: string }).code).toBe("attachment_limit_reached");
  });
});

describe("the type, from the bytes", () => {
  it("refuses a PNG header on an .exe and HTML claiming to be text, and removes what arrived", async () => {
    const ada = await signUp("ada");
    const mine = await noteOf(ada);
    const exe = utf8("MZ\u0090\u0000\u0003 this program cannot be run in DOS mode");
    const asPng = await uploadSteps(stack.call, ada, mine.id, exe, { name: "setup.exe.png" });
    expect(asPng.completed?.status, asPng.completed?.text).toBe(415);
    expect((asPng.completed?.body as { code: string }).code).toBe("attachment_type_mismatch");
    const html = utf8("<!DOCTYPE html><script>alert(document.cookie)</script>");
    const asText = await uploadSteps(stack.call, ada, mine.id, html, { name: "notes.txt", type: "text/plain" });
    expect(asText.completed?.status, asText.completed?.text).toBe(415);
    // A PDF declared but sent to the store as HTML: the type the store would serve is checked too.
    const pdf = utf8("%PDF-1.7\n");
    const reserved = await stack.call("/attachments-create", {
      token: ada.accessToken,
      body: { noteId: mine.id, name: "a.pdf", type: "application/pdf", size: pdf.length },
    });
    const { attachment: file, upload: target } = uploadEnvelope.parse(reserved.body).data;
    const put = await fetch(target.url, { method: "PUT", headers: { "Content-Type": "text/html" }, body: pdf });
    await put.body?.cancel();
    expect(put.ok).toBe(false);
    expect((await stack.call("/attachments-complete", { token: ada.accessToken, body: { id: file.id } })).status)
      .toBe(409);
    for (const steps of [asPng, asText]) {
      const { id } = uploadEnvelope.parse(steps.reserved.body).data.attachment;
      await expect.poll(() => store.holds(pathOf(ada, id)), { timeout: 10_000 }).toBe(false);
    }
    expect(await listOf(ada, mine.id)).toEqual([]);
  });
});

describe("nothing orphaned", () => {
  it("removes a note's objects with the note, and every object with the account", async () => {
    const ada = await signUp("ada");
    const [kept, dropped] = [await noteOf(ada), await noteOf(ada)];
    const keptFile = await upload(stack.call, ada, kept.id, pngBytes());
    const droppedFile = await upload(stack.call, ada, dropped.id, pngBytes());
    await stack.call(`/notes-delete?id=${dropped.id}`, { method: "DELETE", token: ada.accessToken });
    await expect.poll(() => store.holds(pathOf(ada, droppedFile.id)), { timeout: 10_000 }).toBe(false);
    expect(await store.holds(pathOf(ada, keptFile.id))).toBe(true);

    const deleted = await stack.call("/auth/delete-account", {
      token: ada.accessToken,
      body: { password: ada.password },
    });
    expect(deleted.status, deleted.text).toBe(200);
    await expect.poll(() => store.holds(pathOf(ada, keptFile.id)), { timeout: 10_000 }).toBe(false);
  });

  it("gives up an upload never completed once it expires, and removes its object", async () => {
    const ada = await signUp("ada");
    const mine = await noteOf(ada);
    // The bytes arrive, but the client never completes the upload.
    const reserved = await stack.call("/attachments-create", {
      token: ada.accessToken,
      body: { noteId: mine.id, name: "gone.png", type: "image/png", size: 64 },
    });
    const { attachment: { id }, upload: target } = uploadEnvelope.parse(reserved.body).data;
    await (await fetch(target.url, { method: "PUT", headers: target.headers, body: pngBytes() })).body?.cancel();
    expect(await store.holds(pathOf(ada, id))).toBe(true);
    // Its two hours passed: the schedule gives it up.
    await stack.sql`update public.attachments set expires_at = now() - interval '1 second' where id = ${id}`;
    await expect.poll(() => store.holds(pathOf(ada, id)), { timeout: 10_000 }).toBe(false);
    expectNotesError(await stack.call("/attachments-complete", { token: ada.accessToken, body: { id } }), 404);
  });
});

describe("synced and live", () => {
  it("puts each attachment change of a note on the changes feed and the stream", async () => {
    const ada = await signUp("ada");
    const mine = await noteOf(ada);
    const feed = async (since?: string) => {
      const query = since === undefined ? "" : `?since=${encodeURIComponent(since)}`;
      return notesSuccessEnvelope(changeList).parse(
        (await stack.call(`/notes-changes${query}`, { token: ada.accessToken })).body,
      ).data;
    };
    const { cursor } = await feed();
    const stream = await openStream(stack.baseUrl, ada.accessToken, { since: cursor });
    try {
      const file = await upload(stack.call, ada, mine.id, pngBytes());
      const added = await feed(cursor);
      expect(added.changes).toEqual([expect.objectContaining({ id: mine.id, attachments: 1 })]);
      await stack.call(`/attachments-delete?id=${file.id}`, { method: "DELETE", token: ada.accessToken });
      const removed = await feed(added.cursor);
      expect(removed.changes).toEqual([expect.objectContaining({ id: mine.id, attachments: 0 })]);
      const counts = () => stream.changes().map(({ change }) => (change as Note).attachments);
      await expect.poll(counts, { timeout: 10_000 }).toEqual([1, 0]);
    } finally {
      stream.close();
    }
  });
});

describe("client.attachments", () => {
  it("uploads with progress, lists, downloads, gives a URL and removes; a refusal throws its status and code", async () => {
    const client = createNotesClient({ url: stack.baseUrl, anonKey: testAnonKey });
    await client.auth.register({
      name: "Client",
      email: `client-${crypto.randomUUID()}@example.com`,
      password: "a good long password",
    });
    const mine = await client.notes.create({ title: "Receipts" });
    const progress: number[] = [];
    const data = new Blob([pngBytes(500)], { type: "image/png" });
    const file = await client.attachments.upload(mine.id, data, {
      name: "receipt.png",
      onProgress: (sent) => progress.push(sent),
    });
    expect(file).toMatchObject({ noteId: mine.id, name: "receipt.png", type: "image/png", size: 500 });
    expect(progress.at(-1)).toBe(500);
    expect(await client.attachments.list(mine.id)).toEqual([file]);
    expect(new Uint8Array(await (await client.attachments.download(file.id)).arrayBuffer())).toEqual(pngBytes(500));
    expect(await client.attachments.url(file.id)).toMatch(/\/storage\/v1\/object\/sign\//);
    expect(await client.attachments.remove(file.id)).toEqual({ id: file.id });
    expect(await client.attachments.list(mine.id)).toEqual([]);

    const refused = await client.attachments.upload(mine.id, new Blob([pngBytes(maxBytes + 1)], { type: "image/png" }))
      .catch((error) => error);
    expect(refused).toBeInstanceOf(NotesApiError);
    expect(refused).toMatchObject({ status: 413, code: "attachment_too_large" });
    const mismatch = await client.attachments.upload(mine.id, new Blob([utf8("not a picture")], { type: "image/png" }))
      .catch((error) => error);
    expect(mismatch).toMatchObject({ status: 415, code: "attachment_type_mismatch" });
  });
});
