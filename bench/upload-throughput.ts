/**
 * Upload throughput of attachments against the disk's own: the same bytes put through the service (reserve, PUT to
 * the signed URL of the stack's store, complete) and copied to the same disk with one `writeFile`, each several
 * times, in MiB/s. The file is 6 MiB, the largest that goes up in one PUT (a larger one goes in resumable parts).
 * Run by `npm run bench` and alone by `npm run bench:uploads`, each on a stack of its own on embedded PGlite, so
 * nothing else loads the disk.
 *
 * @example
 * ```ts
 * const result = await measureUploadThroughput({ mebibytes: 6, rounds: 5 });
 * ```
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startStack, testAnonKey, testSecrets } from "../dev/harness/stack.ts";
import { markdownTable } from "./report.ts";
import { median } from "./load.ts";
import { send } from "./requests.ts";

export interface UploadThroughput {
  mebibytes: number;
  rounds: number;
  /** Median MiB/s of the whole upload: reserve, PUT, complete. */
  uploadMibPerSecond: number;
  /** Median MiB/s of one `writeFile` of the same bytes to the same temporary folder's disk. */
  diskMibPerSecond: number;
}

/** Uploads `mebibytes` of image bytes `rounds` times and writes them as often to the disk; medians of each. */
export async function measureUploadThroughput(
  options: { mebibytes: number; rounds: number },
): Promise<UploadThroughput> {
  const bytes = new Uint8Array(options.mebibytes * 1_048_576).map((_, index) => index % 251);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const stack = await startStack({
    env: { ...testSecrets, SUPABASE_ANON_KEY: testAnonKey, ATTACHMENT_MAX_BYTES: String(bytes.length) },
  });
  const scratch = await mkdtemp(join(tmpdir(), "notes-upload-bench-"));
  try {
    const registered = await send(stack.baseUrl, {
      path: "/auth/register",
      method: "POST",
      headers: { apikey: testAnonKey },
      body: { name: "Uploads", email: `uploads-${Date.now()}@example.com`, password: "uploads bench password" },
      status: 201,
    });
    const authorization = { authorization: String(registered.body.data?.accessToken) };
    const uploadSeconds: number[] = [];
    const diskSeconds: number[] = [];
    for (let round = 0; round < options.rounds; round++) {
      const note = await send(stack.baseUrl, {
        path: "/notes-create",
        method: "POST",
        headers: authorization,
        body: { title: `Upload ${round}` },
        status: 201,
      });
      const started = performance.now();
      const reserved = await send(stack.baseUrl, {
        path: "/attachments-create",
        method: "POST",
        headers: authorization,
        body: { noteId: note.body.data?.id, name: "photo.png", type: "image/png", size: bytes.length },
        status: 201,
      });
      const { attachment, upload } = reserved.body.data as {
        attachment: { id: string };
        upload: { url: string; method: string; headers: Record<string, string> };
      };
      if (upload.method !== "PUT") {
        throw new Error(`a ${options.mebibytes} MiB file was answered a ${upload.method} upload`);
      }
      const put = await fetch(upload.url, { method: "PUT", headers: upload.headers, body: bytes });
      await put.body?.cancel();
      if (!put.ok) throw new Error(`the store answered ${put.status}`);
      await send(stack.baseUrl, {
        path: "/attachments-complete",
        method: "POST",
        headers: authorization,
        body: { id: attachment.id },
        status: 200,
      });
      uploadSeconds.push((performance.now() - started) / 1000);
      const copyStarted = performance.now();
      await writeFile(join(scratch, `copy-${round}`), bytes);
      diskSeconds.push((performance.now() - copyStarted) / 1000);
    }
    return {
      ...options,
      uploadMibPerSecond: options.mebibytes / median(uploadSeconds),
      diskMibPerSecond: options.mebibytes / median(diskSeconds),
    };
  } finally {
    await stack.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The result as a table. */
export function uploadThroughputTable(result: UploadThroughput): string {
  return markdownTable(
    ["Path", `MiB/s (${result.mebibytes} MiB, median of ${result.rounds})`],
    [
      ["Upload: reserve, PUT to the store's signed URL, complete", result.uploadMibPerSecond.toFixed(0)],
      ["The same bytes written to the same disk", result.diskMibPerSecond.toFixed(0)],
      ["Upload against the disk", `${(result.uploadMibPerSecond / result.diskMibPerSecond).toFixed(2)}x`],
    ],
  );
}

if (import.meta.main) {
  const result = await measureUploadThroughput({ mebibytes: 6, rounds: 5 });
  console.log("## Attachment upload throughput against the disk\n");
  console.log(uploadThroughputTable(result));
}
