/**
 * Files over 6 MiB go up resumably (tus, as Supabase Storage takes them): the
 * reservation answers a tus upload instead of a PUT; its signature takes this
 * file alone; an unfinished upload per file at most; a 50 MB upload whose
 * connection is cut at half resumes through the typed client, sending again
 * at most what of the part that was cut did not arrive; and a lost answer to
 * the last part still ends in a completed file. The
 * store is reached through a TCP proxy the test cuts and whose bytes it counts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../dev/harness/free-port.ts";
import { testAnonKey } from "../dev/harness/stack.ts";
import { startTcpProxy, type TcpProxy } from "../dev/harness/tcp-proxy.ts";
import { resumableAboveBytes, type ResumableUpload } from "../supabase/functions/_shared/contract/mod.ts";
import { createNotesClient } from "../shared/index.ts";
import { registerUser } from "./support/api.ts";
import { pngBytes, storeOf, uploadEnvelope } from "./support/attachments.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";

const serviceKey = "attachments-resumable-service-role-key";
const megabyte = 1024 * 1024;
let stack: ScratchStack;
let proxy: TcpProxy;

beforeAll(async () => {
  const port = await freePort();
  proxy = await startTcpProxy({ host: "127.0.0.1", port });
  stack = await startScratchStack("attachments_resumable", {
    env: {
      PORT: String(port),
      SUPABASE_URL: new URL(proxy.route("http://127.0.0.1:1")).origin,
      SUPABASE_SERVICE_ROLE_KEY: serviceKey,
      ATTACHMENT_MAX_BYTES: String(60 * megabyte),
    },
  });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await proxy?.close();
});

async function reserve(token: string, size: number) {
  const note = await stack.call("/notes-create", { token, body: { title: "Large files" } });
  const noteId = (note.body as { data: { id: string } }).data.id;
  const reserved = await stack.call("/attachments-create", {
    token,
    body: { noteId, name: "scan.png", type: "image/png", size },
  });
  expect(reserved.status, reserved.text).toBe(201);
  return uploadEnvelope.parse(reserved.body).data;
}

describe("a file over 6 MiB", () => {
  it("is reserved as a tus upload; one of 6 MiB as a PUT", async () => {
    const ada = await registerUser("ada", { baseUrl: stack.baseUrl });
    expect((await reserve(ada.accessToken, resumableAboveBytes)).upload.method).toBe("PUT");
    const { attachment, upload } = await reserve(ada.accessToken, resumableAboveBytes + 1);
    expect(upload).toMatchObject({
      method: "tus",
      url: expect.stringMatching(/\/storage\/v1\/upload\/resumable\/sign$/),
      chunkSize: resumableAboveBytes,
      metadata: { bucketName: "attachments", objectName: `${ada.id}/${attachment.id}`, contentType: "image/png" },
    });
    expect(Object.keys(upload.headers)).toEqual(["x-signature"]);
  });

  it("takes its signature for that file alone, and none without one", async () => {
    const ada = await registerUser("ada", { baseUrl: stack.baseUrl });
    const upload = (await reserve(ada.accessToken, 7 * megabyte)).upload as ResumableUpload;
    const other = (await reserve(ada.accessToken, 7 * megabyte)).upload as ResumableUpload;
    const create = (headers: Record<string, string>, metadata: Record<string, string>) =>
      fetch(upload.url, {
        method: "POST",
        headers: {
          "Tus-Resumable": "1.0.0",
          "Upload-Length": String(7 * megabyte),
          "Upload-Metadata": Object.entries(metadata).map(([key, value]) => `${key} ${btoa(value)}`).join(","),
          ...headers,
        },
      });
    const elsewhere = await create(upload.headers, other.metadata);
    expect(elsewhere.status, await elsewhere.text()).toBe(400);
    const unsigned = await create({}, upload.metadata);
    expect(unsigned.status, await unsigned.text()).toBe(400);
    const signed = await create(upload.headers, upload.metadata);
    await signed.body?.cancel();
    expect(signed.status).toBe(201);
    // The upload's own URL needs the signature too.
    const location = new URL(signed.headers.get("location") ?? "", upload.url).href;
    const head = await fetch(location, { method: "HEAD", headers: { "Tus-Resumable": "1.0.0" } });
    expect(head.status).toBe(400);
    const headSigned = await fetch(location, {
      method: "HEAD",
      headers: { "Tus-Resumable": "1.0.0", ...upload.headers },
    });
    expect(headSigned.status).toBe(200);
    expect(headSigned.headers.get("upload-offset")).toBe("0");
    // A small part where it is refused: the store answers before reading a body, and may close on the rest of one.
    const part = (headers: Record<string, string>, bytes: number) =>
      fetch(location, {
        method: "PATCH",
        headers: {
          "Tus-Resumable": "1.0.0",
          "Upload-Offset": "0",
          "Content-Type": "application/offset+octet-stream",
          ...headers,
        },
        body: pngBytes(bytes),
      });
    const foreign = await part(other.headers, 16);
    expect(foreign.status, await foreign.text()).toBe(400);
    const own = await part(upload.headers, megabyte);
    await own.body?.cancel();
    expect([own.status, own.headers.get("upload-offset")]).toEqual([204, String(megabyte)]);
  });

  it("keeps one unfinished upload per file: creating it again starts it over, so one signature cannot fill the disk", async () => {
    const ada = await registerUser("ada", { baseUrl: stack.baseUrl });
    const upload = (await reserve(ada.accessToken, 7 * megabyte)).upload as ResumableUpload;
    const headers = { "Tus-Resumable": "1.0.0", ...upload.headers };
    const create = async () => {
      const created = await fetch(upload.url, {
        method: "POST",
        headers: {
          ...headers,
          "Upload-Length": String(7 * megabyte),
          "Upload-Metadata": Object.entries(upload.metadata).map(([key, value]) => `${key} ${btoa(value)}`).join(","),
        },
      });
      await created.body?.cancel();
      expect(created.status).toBe(201);
      return new URL(created.headers.get("location") ?? "", upload.url).href;
    };
    const first = await create();
    const part = await fetch(first, {
      method: "PATCH",
      headers: { ...headers, "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream" },
      body: pngBytes(megabyte),
    });
    await part.body?.cancel();
    expect(part.status).toBe(204);
    const second = await create();
    expect(second).toBe(first);
    const head = await fetch(second, { method: "HEAD", headers });
    expect(head.headers.get("upload-offset")).toBe("0");
  });

  it("completes a file whose last part's answer was lost: the client finds the upload finished and completes it", async () => {
    // The store takes the last part and finishes the upload; the answer never reaches the client.
    const losing: typeof fetch = async (input, init) => {
      const answer = await fetch(input, init);
      if (init?.method === "PATCH" && answer.headers.get("upload-offset") === String(7 * megabyte)) {
        await answer.body?.cancel();
        throw new TypeError("fetch failed: the connection was reset");
      }
      return answer;
    };
    const client = createNotesClient({ url: stack.baseUrl, anonKey: testAnonKey, fetch: losing });
    await client.auth.register({
      name: "Lost answer",
      email: `lost-${crypto.randomUUID()}@example.com`,
      password: "a good long password",
    });
    const note = await client.notes.create({ title: "Scans" });
    const file = await client.attachments.upload(note.id, new Blob([pngBytes(7 * megabyte)], { type: "image/png" }), {
      name: "scan.png",
    });
    expect(file).toMatchObject({ name: "scan.png", size: 7 * megabyte });
    expect(await client.attachments.list(note.id)).toHaveLength(1);
  });

  it("of 50 MB, cut at half, resumes through the client and sends again at most the part that was cut", async () => {
    const client = createNotesClient({ url: stack.baseUrl, anonKey: testAnonKey });
    await client.auth.register({
      name: "Resumer",
      email: `resumer-${crypto.randomUUID()}@example.com`,
      password: "a good long password",
    });
    const note = await client.notes.create({ title: "Scans" });
    const bytes = pngBytes(50 * megabyte);
    const before = proxy.bytesUpstream();
    // Every connection to the store dropped once half the bytes have gone through: the part in flight is cut.
    let cutAt: number | undefined;
    const watch = setInterval(() => {
      if (cutAt === undefined && proxy.bytesUpstream() - before >= bytes.length / 2) {
        cutAt = proxy.bytesUpstream() - before;
        proxy.cut();
        proxy.restore();
      }
    }, 1);
    const progress: number[] = [];
    let file;
    try {
      file = await client.attachments.upload(note.id, new Blob([bytes], { type: "image/png" }), {
        name: "scan.png",
        onProgress: (sent) => progress.push(sent),
      });
    } finally {
      clearInterval(watch);
    }
    const sent = proxy.bytesUpstream() - before;
    expect(cutAt).toBeGreaterThan(0);
    expect(file).toMatchObject({ name: "scan.png", type: "image/png", size: bytes.length });
    // Everything once, and no more than one part again (headers are a few hundred bytes a request).
    expect(sent).toBeGreaterThanOrEqual(bytes.length);
    expect(sent).toBeLessThan(bytes.length + resumableAboveBytes + 64 * 1024);
    expect(progress.at(-1)).toBe(bytes.length);
    // The store kept the bytes of the cut part that arrived: the client went on from an offset within that part.
    // (Parts go from there, so every later offset is off the parts' grid too.)
    expect(progress.filter((held) => held % resumableAboveBytes !== 0 && held < bytes.length).length).toBeGreaterThan(
      0,
    );
    const stored = new Uint8Array(await (await client.attachments.download(file.id)).arrayBuffer());
    expect(stored.length).toBe(bytes.length);
    expect(Buffer.compare(stored, bytes)).toBe(0);
    const store = storeOf(stack.baseUrl, serviceKey);
    expect(await store.holds(`${(await client.auth.getUser()).id}/${file.id}`)).toBe(true);
  }, 90_000);
});
