/**
 * Checks answers of the running stack against the committed `openapi.json`:
 * the status must be one the document lists for the operation, and the body
 * must match that response's schema (ajv, JSON Schema 2020-12 as OpenAPI 3.1
 * uses it). Records which operations answered which statuses.
 */
import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { expect } from "vitest";
import type { ApiResponse } from "./api.ts";

interface MediaType {
  schema: { $ref: string };
  example?: unknown;
}
interface HeaderObject {
  required?: boolean;
  schema: { type: string; format?: string };
}
interface ResponseObject {
  content?: Record<string, MediaType>;
  headers?: Record<string, HeaderObject>;
}
interface OperationObject {
  operationId: string;
  requestBody?: { content: Record<string, MediaType> };
  responses: Record<string, ResponseObject>;
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Record<string, object> };
}

/** The committed document, as a client would download it. */
export const openApiDocument: OpenApiDocument = JSON.parse(
  readFileSync(new URL("../../openapi.json", import.meta.url), "utf8"),
);

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats.default(ajv);
// The components under one id, so each `#/components/schemas/...` reference resolves as in the document.
ajv.addSchema({ $id: "openapi", components: openApiDocument.components });

/** Whether `value` matches the schema that `ref` points to, with ajv's complaints. */
export function matchesRef(ref: string, value: unknown): { valid: boolean; errors: string } {
  const validate = ajv.compile({ $ref: `openapi${ref}` });
  const valid = validate(value);
  return { valid, errors: ajv.errorsText(validate.errors) };
}

/** `"POST /auth/login"` -> statuses seen. */
export const observed = new Map<string, Set<number>>();

/**
 * Asserts that `response` of `method path` is documented, status and body. A
 * method the path does not serve is checked against the 405 its operations
 * document, and `Allow` must name every method the path serves.
 */
export function expectDocumented(method: string, path: string, response: ApiResponse): void {
  const methods = openApiDocument.paths[path] ?? {};
  let documentedMethod = method.toLowerCase();
  if (!methods[documentedMethod] && response.status === 405) {
    const served = Object.keys(methods);
    expect(response.headers.get("allow")).toBe(served.map((each) => each.toUpperCase()).join(", "));
    // Each operation of the path documents the 405 that any other method gets.
    for (const each of served.slice(1)) expectDocumented(each, path, response);
    documentedMethod = served[0];
  }
  const operation = methods[documentedMethod];
  expect(operation, `${method} ${path} is documented`).toBeDefined();
  const documented = operation?.responses[String(response.status)];
  expect(documented, `${method} ${path} documents status ${response.status}: ${response.text}`).toBeDefined();
  const key = `${documentedMethod.toUpperCase()} ${path}`;
  const location = response.headers.get("location");
  if (documented?.headers?.Location?.required) {
    // A redirect: no body, and an absolute URL to go to.
    expect(documented.content, `${method} ${path} ${response.status} documents no body`).toBeUndefined();
    expect(response.text, `${method} ${path} ${response.status} has no body`).toBe("");
    expect(location, `${method} ${path} ${response.status} has a Location`).not.toBeNull();
    expect(() => new URL(location ?? ""), `Location ${location} is an absolute URL`).not.toThrow();
    observed.set(key, (observed.get(key) ?? new Set()).add(response.status));
    return;
  }
  expect(location, `${method} ${path} ${response.status} redirects nowhere`).toBeNull();
  const ref = documented?.content?.["application/json"]?.schema.$ref;
  expect(ref, `${method} ${path} ${response.status} has a JSON schema`).toBeDefined();
  const { valid, errors } = matchesRef(ref ?? "", response.body);
  expect(valid, `${method} ${path} ${response.status} body ${response.text} against ${ref}: ${errors}`).toBe(true);
  observed.set(key, (observed.get(key) ?? new Set()).add(response.status));
}
