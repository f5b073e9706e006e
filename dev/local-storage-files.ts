/**
 * The files behind the local stack's Storage stand-in (`local-storage.ts`):
 * each object's bytes and the type it was stored with, and each bucket's
 * limits, under one folder. An upload is written to a temporary file and
 * linked into place only once complete and within the bucket's size limit, so
 * a cut upload or a refused one leaves nothing, and of two uploads to one path
 * exactly one wins; a resumable upload's file is linked the same way once its
 * last byte is in.
 *
 * @example
 * ```ts
 * const files = new ObjectFiles(".data/storage");
 * const object = await files.open("attachments", "user/uuid", "bytes=0-63");
 * ```
 */
import { createReadStream } from "node:fs";
import { link, mkdir, open, readFile, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";

/** The media type of a `Content-Type` value, without its parameters, in lower case ("" for none). */
export function mediaTypeOf(contentType: string | null | undefined): string {
  return (contentType ?? "").split(";")[0].trim().toLowerCase();
}

/** A bucket's limits, as `POST /bucket` sets them. */
export interface BucketRecord {
  fileSizeLimit?: number;
  allowedMimeTypes: string[];
}

/** An object opened for reading: all of it, or the range asked for. */
export interface OpenedObject {
  body: ReadableStream<Uint8Array>;
  /** Bytes in `body`. */
  length: number;
  /** Bytes in the whole object. */
  size: number;
  contentType: string;
  range?: { start: number; end: number };
}

/** The first range of a `Range: bytes=a-b` header within `size` bytes, or undefined for the whole object. */
function rangeOf(header: string | null, size: number): { start: number; end: number } | undefined {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header ?? "");
  if (!match || size === 0 || (match[1] === "" && match[2] === "")) return undefined;
  if (match[1] === "") return { start: Math.max(0, size - Number(match[2])), end: size - 1 };
  const start = Number(match[1]);
  if (start >= size) return undefined;
  return { start, end: Math.min(size - 1, match[2] === "" ? size - 1 : Number(match[2])) };
}

export class ObjectFiles {
  constructor(private readonly root: string) {}

  private objectFile(bucket: string, path: string): string {
    return join(this.root, "objects", bucket, path);
  }

  private typeFile(bucket: string, path: string): string {
    return join(this.root, "types", bucket, `${path}.type`);
  }

  /** The bucket's limits, or undefined when it does not exist. */
  async bucket(id: string): Promise<BucketRecord | undefined> {
    const text = await readFile(join(this.root, "buckets", `${id}.json`), "utf8").catch(() => undefined);
    return text === undefined ? undefined : JSON.parse(text) as BucketRecord;
  }

  async saveBucket(id: string, record: BucketRecord): Promise<void> {
    await mkdir(join(this.root, "buckets"), { recursive: true });
    await writeFile(join(this.root, "buckets", `${id}.json`), JSON.stringify(record));
  }

  /** Stores `body` at the path unless it passes `limit` bytes or an object is there already. */
  async write(
    bucket: string,
    path: string,
    body: ReadableStream<Uint8Array> | null,
    contentType: string,
    limit: number | undefined,
  ): Promise<"stored" | "too_large" | "exists"> {
    if (await this.holds(bucket, path)) return "exists";
    const temporary = join(this.root, "incoming", crypto.randomUUID());
    await mkdir(dirname(temporary), { recursive: true });
    const file = await open(temporary, "w");
    let written = 0;
    try {
      for await (const chunk of body ?? []) {
        written += chunk.length;
        if (limit !== undefined && written > limit) {
          await body?.cancel().catch(() => {});
          return "too_large";
        }
        await file.write(chunk);
      }
      await file.close();
      return await this.place(bucket, path, temporary, contentType);
    } finally {
      await file.close().catch(() => {});
      await rm(temporary, { force: true });
    }
  }

  /**
   * Links the complete file `source` into place as the object at the path, unless an object is there already (of
   * two at once, exactly one wins). `source` stays where it is, for its writer to remove.
   */
  async place(bucket: string, path: string, source: string, contentType: string): Promise<"stored" | "exists"> {
    const target = this.objectFile(bucket, path);
    await mkdir(dirname(target), { recursive: true });
    try {
      await link(source, target);
    } catch (error) {
      if ((error as { code?: string }).code === "EEXIST") return "exists";
      throw error;
    }
    // The winner's type only; written before its writer answers, so before anyone completes the file.
    await mkdir(dirname(this.typeFile(bucket, path)), { recursive: true });
    await writeFile(this.typeFile(bucket, path), contentType);
    return "stored";
  }

  /** Whether an object is at the path. */
  async holds(bucket: string, path: string): Promise<boolean> {
    return await stat(this.objectFile(bucket, path)).then(() => true, () => false);
  }

  /** The object at the path (the range of `rangeHeader` when it names one), or undefined when there is none. */
  async open(bucket: string, path: string, rangeHeader: string | null): Promise<OpenedObject | undefined> {
    const file = this.objectFile(bucket, path);
    const size = await stat(file).then((info) => info.size, () => undefined);
    if (size === undefined) return undefined;
    const contentType = await readFile(this.typeFile(bucket, path), "utf8").catch(() => "application/octet-stream");
    const range = rangeOf(rangeHeader, size);
    const start = range?.start ?? 0;
    const end = range?.end ?? size - 1;
    const length = size === 0 ? 0 : end - start + 1;
    const body = length === 0
      ? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() })
      : Readable.toWeb(createReadStream(file, { start, end })) as ReadableStream<Uint8Array>;
    return { body, length, size, contentType, range };
  }

  /** Removes the objects at `paths`; answers those that were there. */
  async remove(bucket: string, paths: readonly string[]): Promise<string[]> {
    const removed: string[] = [];
    for (const path of paths) {
      if (await this.holds(bucket, path)) removed.push(path);
      await rm(this.objectFile(bucket, path), { force: true });
      await rm(this.typeFile(bucket, path), { force: true });
    }
    return removed;
  }
}
