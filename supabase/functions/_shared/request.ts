/**
 * Reading and validating request input with the contract's zod schemas. Every
 * failure is a `HttpError` whose message names the problem (and the field).
 *
 * @example
 * ```ts
 * const body = await readJsonBody(req, loginBody);
 * ```
 */
import type { z } from "zod";
import { limits } from "./contract.ts";
import { BadRequestError, HttpError } from "./http-error.ts";

/** Turns the first zod issue into a message that names the field. */
export function describeIssue(error: z.ZodError): string {
  const [issue] = error.issues;
  if (!issue) return "Invalid request";
  // The contract's messages start with the field's name; zod's own ones get it put in front.
  const field = issue.path.join(".");
  return field && !issue.message.startsWith(field) ? `${field}: ${issue.message}` : issue.message;
}

/** Validates `input` with `schema`, or throws a 400 naming the first bad field. */
export function validate<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw new BadRequestError(describeIssue(result.error));
  return result.data;
}

async function readLimitedText(req: Request, maxBytes: number): Promise<string> {
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (declared > maxBytes) throw new HttpError(413, `Request body must be at most ${maxBytes} bytes`);
  if (!req.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of req.body) {
    size += chunk.byteLength;
    // Content-Length can be absent or wrong (chunked uploads), so count what arrives.
    if (size > maxBytes) throw new HttpError(413, `Request body must be at most ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new BadRequestError("Request body must be UTF-8 encoded JSON");
  }
}

/**
 * Reads a JSON object body of at most 1 MiB and validates it with `schema`.
 * Requires `Content-Type: application/json`, as interface.md does.
 */
export async function readJsonBody<S extends z.ZodType>(req: Request, schema: S): Promise<z.output<S>> {
  const contentType = req.headers.get("content-type") ?? "";
  if (!/^application\/json\s*(;|$)/i.test(contentType)) {
    throw new HttpError(415, "Content-Type must be application/json");
  }
  const raw = await readLimitedText(req, limits.bodyMaxBytes);
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
 * Validates the URL's query with `schema`. A parameter given twice is a 400:
 * which of the values was meant is not ours to guess.
 */
export function readQuery<S extends z.ZodType>(req: Request, schema: S): z.output<S> {
  const params = new URL(req.url).searchParams;
  // No prototype, so a parameter named `__proto__` is just a key.
  const query: Record<string, string> = Object.create(null);
  for (const [name, value] of params) {
    if (Object.hasOwn(query, name)) throw new BadRequestError(`${name} must be given once`);
    query[name] = value;
  }
  return validate(schema, query);
}
