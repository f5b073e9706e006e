/**
 * Reading and validating request input with the contract's zod schemas. Every
 * failure is a `HttpError` whose message names the problem (and the field).
 *
 * @example
 * ```ts
 * const body = await readJsonBody(req, loginBody);
 * ```
 */
import { z } from "zod";
import { defaultBodyTimeoutMs } from "../config/mod.ts";
import { limits } from "../contract/common.ts";
import type { FieldProblem } from "../contract/envelopes.ts";
import {
  BadRequestError,
  ClientAbortedError,
  PayloadTooLargeError,
  RequestTimeoutError,
  UnsupportedMediaTypeError,
} from "./errors.ts";
import { jsonDepthExceeds, maxJsonDepth } from "./json-depth.ts";

/** Each zod issue as a problem of its field, in a message that names the field. */
export function fieldProblems(error: z.ZodError): FieldProblem[] {
  return error.issues.flatMap((issue): FieldProblem[] => {
    const field = issue.path.join(".");
    if (!field) return [{ message: issue.message }];
    // The contract's messages start with the field's name; zod's own ones get it put in front.
    return [{ field, message: issue.message.startsWith(field) ? issue.message : `${field}: ${issue.message}` }];
  });
}

/** Validates `input` with `schema`, or throws a 400 whose message is the first problem and lists them all. */
export function validate<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const problems = fieldProblems(result.error);
  throw new BadRequestError(problems[0]?.message ?? "Invalid request", problems);
}

/**
 * Bodies declared at most this long are read whole by the runtime in one call
 * rather than chunk by chunk through a stream reader, which costs several
 * times as much per request. The HTTP server reads no more than the declared
 * length, so this is also the most a slow client can make a request hold.
 */
const wholeBodyMaxBytes = 64 * 1024;

/**
 * How much of a refused body is still read, and dropped, before the 413 goes out. The runtime resets a connection it
 * closes with bytes unread, so a client still sending would get the reset instead of the refusal (fetch's "fetch
 * failed", EPIPE). The reading comes before the answer: read in the background after it, the rest was reset all the
 * same. A body declared larger is not read at all, and one that passes this while arriving is read no further: their
 * connections go as before, rather than take more to refuse.
 */
const refusedBodyReadMaxBytes = 4 * 1024 * 1024;

/** Reads and drops `body`, for at most `timeoutMs`. */
async function discardBody(body: ReadableStream<Uint8Array>, timeoutMs: number): Promise<void> {
  const reader = body.getReader();
  const deadline = setTimeout(() => reader.cancel().catch(() => {}), timeoutMs);
  try {
    await discardRest(reader, refusedBodyReadMaxBytes);
  } finally {
    clearTimeout(deadline);
  }
}

/** Reads and drops what `reader` still has, up to `allowance` bytes; a failed read (the deadline, a hang-up) ends it. */
async function discardRest(reader: ReadableStreamDefaultReader<Uint8Array>, allowance: number): Promise<void> {
  try {
    for (let left = allowance; left > 0;) {
      const read = await reader.read();
      if (read.done) return;
      left -= read.value.byteLength;
    }
  } catch {
    // The refusal stands whatever became of the rest.
  }
}

/**
 * Reads the body within `maxBytes` and `timeoutMs`. Throws 413 past the limit,
 * 408 when the body has not fully arrived in time, and `ClientAbortedError`
 * when the client hangs up.
 */
async function readLimitedBytes(req: Request, maxBytes: number, timeoutMs: number): Promise<Uint8Array> {
  // A chunked body's framing overrides a Content-Length beside it (RFC 9112, 6.3), which then says nothing of its size.
  const length = req.headers.has("transfer-encoding") ? null : req.headers.get("content-length");
  const declared = Number(length ?? "0");
  if (declared > maxBytes) {
    // A client that asked to be told first (`Expect: 100-continue`) sends nothing unless the body is read.
    const beingSent = req.headers.get("expect")?.toLowerCase() !== "100-continue";
    if (beingSent && declared <= refusedBodyReadMaxBytes && req.body) await discardBody(req.body, timeoutMs);
    throw new PayloadTooLargeError(maxBytes);
  }
  // Checked before `req.body` is touched: reading that makes the runtime build a stream, which a whole read avoids.
  if (length !== null && declared <= wholeBodyMaxBytes) return await readWholeBody(req, timeoutMs);
  if (!req.body) return new Uint8Array(0);
  return await readBodyChunks(req.body, maxBytes, timeoutMs);
}

/** A small body of declared length, read in one call that the deadline can overtake. */
async function readWholeBody(req: Request, timeoutMs: number): Promise<Uint8Array> {
  let deadline: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    deadline = setTimeout(() => reject(new RequestTimeoutError()), timeoutMs);
  });
  const received = req.bytes().catch((error) => {
    throw new ClientAbortedError({ cause: error });
  });
  try {
    return await Promise.race([received, timedOut]);
  } finally {
    clearTimeout(deadline);
  }
}

/**
 * Reads a body of unknown or large length as it arrives. Each chunk is copied
 * into a buffer that grows with what was received (at most twice it), never
 * kept as it came: a chunk can be a small view of a much larger buffer, so a
 * client trickling single bytes would otherwise pin megabytes. Stops reading
 * when the deadline passes.
 */
async function readBodyChunks(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  timeoutMs: number,
): Promise<Uint8Array> {
  const reader = body.getReader();
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    reader.cancel().catch(() => {});
  }, timeoutMs);
  let buffer = new Uint8Array(0);
  let size = 0;
  try {
    for (;;) {
      let read: ReadableStreamReadResult<Uint8Array>;
      try {
        read = await reader.read();
      } catch (error) {
        if (timedOut) throw new RequestTimeoutError();
        throw new ClientAbortedError({ cause: error });
      }
      if (timedOut) throw new RequestTimeoutError();
      if (read.done) break;
      const chunk = read.value;
      // Content-Length can be absent or wrong (chunked uploads), so count what arrives.
      if (size + chunk.byteLength > maxBytes) {
        await discardRest(reader, refusedBodyReadMaxBytes - size - chunk.byteLength);
        throw new PayloadTooLargeError(maxBytes);
      }
      if (size + chunk.byteLength > buffer.byteLength) {
        const grown = new Uint8Array(Math.min(maxBytes, Math.max(1024, 2 * (size + chunk.byteLength))));
        grown.set(buffer.subarray(0, size));
        buffer = grown;
      }
      buffer.set(chunk, size);
      size += chunk.byteLength;
    }
  } finally {
    clearTimeout(deadline);
  }
  return buffer.subarray(0, size);
}

// One decoder for every request: without `stream`, each decode starts afresh.
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

async function readLimitedText(req: Request, maxBytes: number, timeoutMs: number): Promise<string> {
  const bytes = await readLimitedBytes(req, maxBytes, timeoutMs);
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new BadRequestError("Request body must be UTF-8 encoded JSON");
  }
}

/**
 * Reads a JSON object body of at most 1 MiB, arriving within `timeoutMs`, and validates it with `schema`.
 * Requires `Content-Type: application/json`, as interface.md does.
 */
export async function readJsonBody<S extends z.ZodType>(
  req: Request,
  schema: S,
  timeoutMs = defaultBodyTimeoutMs,
): Promise<z.output<S>> {
  const contentType = req.headers.get("content-type") ?? "";
  if (!/^application\/json\s*(;|$)/i.test(contentType)) {
    throw new UnsupportedMediaTypeError("Content-Type must be application/json");
  }
  const raw = await readLimitedText(req, limits.bodyMaxBytes, timeoutMs);
  if (jsonDepthExceeds(raw, maxJsonDepth)) {
    throw new BadRequestError(`Request body must not nest more than ${maxJsonDepth} levels deep`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new BadRequestError("Request body must be valid JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new BadRequestError("Request body must be a JSON object");
  }
  return validate(schema, parsed);
}

/**
 * Like `readJsonBody`, for endpoints whose every field is optional: a request
 * that carries no body at all is read as `{}`.
 */
export function readOptionalJsonBody<S extends z.ZodType>(
  req: Request,
  schema: S,
  timeoutMs = defaultBodyTimeoutMs,
): Promise<z.output<S>> {
  const declaresBody = req.headers.has("transfer-encoding") || (req.headers.get("content-length") ?? "0") !== "0";
  return declaresBody ? readJsonBody(req, schema, timeoutMs) : Promise.resolve(validate(schema, {}));
}

/**
 * Parameters meant for the platform, not the function: Supabase routes a call
 * by `forceFunctionRegion` where a request's headers cannot be set ("Regional
 * Invocations"), and may pass it on. No endpoint refuses it.
 */
const platformParameters = new Set(["forceFunctionRegion"]);

/**
 * Refuses every query parameter `query` does not name (every one, without a
 * query; any, for a schema that takes other keys too, `z.looseObject`), with a
 * 400 that names each: a client learns at once that a parameter it sends means
 * nothing here. `defineEndpoint` calls it before the endpoint does anything.
 */
export function refuseUnknownParameters(req: Request, query: z.ZodObject | undefined): void {
  if (query?.def.catchall && !(query.def.catchall instanceof z.ZodNever)) return;
  const known = query?.shape ?? {};
  const unknown = new Set<string>();
  for (const name of new URL(req.url).searchParams.keys()) {
    if (!platformParameters.has(name) && !Object.hasOwn(known, name)) unknown.add(name);
  }
  if (unknown.size === 0) return;
  const problems = [...unknown].map((name) => ({
    field: name,
    message: `${name} is not a query parameter of this endpoint`,
  }));
  throw new BadRequestError(problems[0].message, problems);
}

/**
 * Validates the URL's query with `schema`. A parameter given twice is a 400:
 * which of the values was meant is not ours to guess.
 */
export function readQuery<S extends z.ZodType>(req: Request, schema: S): z.output<S> {
  const params = new URL(req.url).searchParams;
  // No prototype, so a parameter named `__proto__` is just a key.
  const query: Record<string, string> = Object.create(null);
  for (const [name, value] of params) {
    if (platformParameters.has(name)) continue;
    if (Object.hasOwn(query, name)) {
      const message = `${name} must be given once`;
      throw new BadRequestError(message, [{ field: name, message }]);
    }
    query[name] = value;
  }
  return validate(schema, query);
}
