/**
 * Hostile input, property-based (fast-check): random and adversarial requests
 * to every endpoint, on a stack with a database of its own so that each
 * failing request can be checked to have changed nothing. What is compared is
 * every row of the accounts, codes, quota and notes tables, and the outbox's
 * mails; not `app.rate_limits`, which a well-formed but wrong login changes
 * on purpose (it is the failure counter), nor the outbox's delivery columns,
 * which the local mail loop fills in on its own schedule. Every failure must
 * carry a documented `code` that goes with its status.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authErrorEnvelope, notesErrorEnvelope } from "../supabase/functions/_shared/contract/mod.ts";
import type { ApiResponse, RegisteredUser } from "./support/api.ts";
import { registerUser } from "./support/api.ts";
import { expectSession } from "./support/auth.ts";
import { expectErrorCode } from "./support/error-codes.ts";
import { noteEnvelope } from "./support/notes.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";
import { testAnonKey } from "../dev/harness/stack.ts";
import { claimsOf, signToken, unsignedToken } from "./support/tokens.ts";

let stack: ScratchStack;
let owner: RegisteredUser;
let noteId: string;
let forgedTokens: string[];

beforeAll(async () => {
  stack = await startScratchStack("hostile", {
    env: { BCRYPT_COST: "4", LOGIN_MAX_ATTEMPTS_PER_ADDRESS: "1000000" },
  });
  owner = await registerUser("hostile-owner", { baseUrl: stack.baseUrl });
  const created = await stack.call("/notes-create", { token: owner.accessToken, body: { title: "target" } });
  noteId = noteEnvelope.parse(created.body).data.id;
  const claims = claimsOf(owner);
  forgedTokens = [
    await signToken(claims, { secret: "another-secret-that-is-long-enough-for-hs256" }),
    await signToken({ ...claims, exp: Math.floor(Date.now() / 1000) - 60 }),
    await signToken({ ...claims, sub: "not-a-uuid" }),
    await signToken({ ...claims, role: "service_role" }),
    unsignedToken(claims),
  ];
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

/** Every row that a failing request must leave alone, as text. */
async function snapshot(): Promise<string> {
  const rows = await stack.sql`
    select
      (select coalesce(string_agg(u::text, e'\\n' order by u.id), '') from app.users u) as users,
      (select coalesce(string_agg(n::text, e'\\n' order by n.id), '') from public.notes n) as notes,
      (select coalesce(string_agg(c::text, e'\\n' order by c.user_id), '') from app.password_reset_codes c) as codes,
      (select coalesce(string_agg(q::text, e'\\n' order by q.user_id), '') from app.reset_mail_quota q) as quota,
      (select coalesce(string_agg(concat_ws('|', m.id, m.recipient, m.subject, m.created_at), e'\\n' order by m.id), '')
         from app.mail_outbox m) as mails`;
  return JSON.stringify(rows[0]);
}

const endpoints = [
  { path: "/auth/login", kind: "auth", method: "POST", fields: ["email", "password"] },
  { path: "/auth-login", kind: "auth", method: "POST", fields: ["email", "password"] },
  { path: "/auth/register", kind: "auth", method: "POST", fields: ["name", "email", "password"] },
  { path: "/auth/create-password", kind: "auth", method: "POST", fields: ["email", "password", "code"] },
  { path: "/auth/request-password-reset", kind: "auth", method: "POST", fields: ["email"] },
  { path: "/notes-create", kind: "notes", method: "POST", fields: ["title", "content", "status"] },
  { path: "/notes-fetch", kind: "notes", method: "GET", fields: ["limit", "offset"] },
  { path: "/notes-save", kind: "notes", method: "POST", fields: ["id", "title", "content", "status"] },
  { path: "/notes-delete", kind: "notes", method: "DELETE", fields: ["id"] },
] as const;
type Endpoint = (typeof endpoints)[number];

/** Printable ASCII: what an HTTP header value can carry at all. */
const headerText = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)) });
const hostileKey = fc.constantFrom("__proto__", "constructor", "prototype", "toString", "hasOwnProperty");
const hostileString = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.string({ unit: "grapheme" }),
  fc.constantFrom("", " ", "\u0000", "a\u0000b", "\ud800", "💥".repeat(300), "x".repeat(1_001), "DRAFT", "PUBLISHED"),
  fc.constantFrom("a@b.co", "ADA@EXAMPLE.COM ", "123456", "not-a-uuid", "00000000-0000-0000-0000-000000000000"),
);
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.jsonValue(),
  fc.constantFrom(null, true, 0, -1, 1e308, [], {}, { __proto__: null }),
);

function hostileObject(endpoint: Endpoint) {
  const key = fc.oneof(fc.constantFrom(...endpoint.fields), hostileKey, fc.string());
  return fc.array(fc.tuple(key, hostileValue), { maxLength: 6 }).map((entries) => {
    // Built as JSON text, so `__proto__` arrives as an own key, exactly as an attacker would send it.
    return `{${
      entries.map(([name, value]) => `${JSON.stringify(name)}:${JSON.stringify(value) ?? "null"}`).join(",")
    }}`;
  });
}

function hostileBody(endpoint: Endpoint): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { arbitrary: hostileObject(endpoint), weight: 4 },
    { arbitrary: fc.json(), weight: 1 },
    { arbitrary: fc.string({ unit: "binary" }), weight: 1 },
    { arbitrary: fc.constantFrom(undefined, "", "{", "null", "[]", '{"a":1}{', "\u0000"), weight: 1 },
  );
}

/** Percent-encodes every UTF-8 byte of `text` (a lone surrogate becomes U+FFFD, as a browser sends it). */
function percentEncoded(text: string): string {
  return [...new TextEncoder().encode(text)].map((byte) => `%${byte.toString(16).padStart(2, "0")}`).join("");
}

function hostileQuery(endpoint: Endpoint): fc.Arbitrary<string> {
  const key = fc.oneof(fc.constantFrom(...endpoint.fields, "limit", "offset", "id"), hostileKey, fc.string());
  const value = fc.oneof(hostileString, fc.integer().map(String), fc.constant(noteIdPlaceholder));
  const pair = fc.oneof(
    { arbitrary: fc.tuple(key, value).map(([name, v]) => `${percentEncoded(name)}=${percentEncoded(v)}`), weight: 4 },
    // Malformed escapes and bare separators, sent as they are.
    { arbitrary: fc.constantFrom("%", "limit=%zz", "id=%E0%A4%A", "=", "&&", "limit", "offset=%00"), weight: 1 },
  );
  return fc.array(pair, { maxLength: 4 }).map((pairs) => pairs.join("&"));
}

/** Stands for the real note's id, which exists only once the stack runs. */
const noteIdPlaceholder = "<note-id>";

const hostileRequest = fc.constantFrom(...endpoints).chain((endpoint) =>
  fc.record({
    endpoint: fc.constant(endpoint),
    method: fc.oneof(
      { arbitrary: fc.constant(endpoint.method), weight: 4 },
      { arbitrary: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "PROPFIND"), weight: 1 },
    ),
    body: hostileBody(endpoint),
    query: hostileQuery(endpoint),
    // Mostly past the gates, so that most requests reach body and query validation.
    token: fc.oneof(
      { arbitrary: fc.constant("valid"), weight: 6 },
      fc.constant("none"),
      fc.integer({ min: 0, max: 4 }).map((index) => `forged:${index}`),
      headerText.map((text) => `raw:${text}`),
    ),
    apiKey: fc.oneof({ arbitrary: fc.constant(testAnonKey), weight: 6 }, fc.constant(null), headerText),
    contentType: fc.oneof(
      { arbitrary: fc.constant("application/json"), weight: 6 },
      fc.constantFrom("text/plain", "application/json; charset=utf-8", "application/x-www-form-urlencoded", ""),
      headerText,
    ),
  })
);

type HostileRequest = typeof hostileRequest extends fc.Arbitrary<infer T> ? T : never;

async function send(request: HostileRequest): Promise<ApiResponse> {
  const headers: Record<string, string> = {};
  if (request.apiKey !== null) headers.apikey = request.apiKey;
  if (request.contentType) headers["Content-Type"] = request.contentType;
  if (request.token === "valid") headers.Authorization = owner.accessToken;
  else if (request.token.startsWith("forged:")) {
    headers.Authorization = `Bearer ${forgedTokens[Number(request.token.slice("forged:".length))]}`;
  } else if (request.token.startsWith("raw:")) headers.Authorization = request.token.slice("raw:".length);
  const query = request.query.replaceAll(percentEncoded(noteIdPlaceholder), noteId);
  const body = request.method === "GET" || request.body === undefined
    ? undefined
    : request.body.replaceAll(noteIdPlaceholder, noteId);
  const response = await fetch(`${stack.baseUrl}${request.endpoint.path}${query ? `?${query}` : ""}`, {
    method: request.method,
    headers,
    body,
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/**
 * The error message of `response` in `kind`'s envelope, failing unless the
 * envelope is exactly that and carries a documented code for its status.
 */
function errorMessage(response: ApiResponse, kind: "auth" | "notes"): string {
  expectErrorCode(response);
  if (kind === "auth") {
    const envelope = authErrorEnvelope.strict().parse(response.body);
    expect(envelope.statusCode).toBe(response.status);
    return envelope.message;
  }
  return notesErrorEnvelope.strict().parse(response.body).error;
}

describe("hostile requests to every endpoint", () => {
  it(
    "never get a 5xx; failures are JSON in the endpoint's envelope with a code, name the problem, and change nothing",
    async () => {
      await fc.assert(
        fc.asyncProperty(hostileRequest, async (request) => {
          const before = await snapshot();
          const response = await send(request);
          expect(response.status, response.text).toBeLessThan(500);
          expect(response.body, response.text).toBeDefined();
          if (response.status < 400) return;
          const message = errorMessage(response, request.endpoint.kind);
          expect(message.trim().length).toBeGreaterThan(3);
          expect(await snapshot()).toBe(before);
        }),
        { numRuns: 400 },
      );
    },
    300_000,
  );

  it("name the field or parameter that is wrong", async () => {
    const validBodies: Record<string, Record<string, unknown>> = {
      "/auth/login": { email: "someone@example.com", password: "long enough" },
      "/auth/register": { name: "Someone", email: "someone@example.com", password: "long enough" },
      "/auth/create-password": { email: "someone@example.com", password: "long enough", code: "123456" },
      "/auth/request-password-reset": { email: "someone@example.com" },
      "/notes-create": { title: "t", content: "c", status: "DRAFT" },
      "/notes-save": { id: "<note-id>", title: "t" },
    };
    const badValue = fc.oneof(
      fc.constantFrom(null, 0, true, [], {}, ["x"], { x: 1 }, "\u0000", "a\u0000"),
      fc.jsonValue().filter((value) => typeof value !== "string"),
    );
    const bodyCase = fc.constantFrom(...Object.keys(validBodies)).chain((path) =>
      fc.record({
        path: fc.constant(path),
        field: fc.constantFrom(...Object.keys(validBodies[path])),
        value: badValue,
      })
    );
    await fc.assert(
      fc.asyncProperty(bodyCase, async ({ path, field, value }) => {
        const body = { ...validBodies[path], [field]: value };
        if (body.id === "<note-id>") body.id = noteId;
        const before = await snapshot();
        const response = await stack.call(path, { body, token: owner.accessToken });
        expect(response.status, response.text).toBe(400);
        const message = errorMessage(response, path.startsWith("/auth") ? "auth" : "notes");
        expect(message).toContain(field);
        expectErrorCode(response, "invalid_request");
        expect(await snapshot()).toBe(before);
      }),
      { numRuns: 150 },
    );
    const queryCase = fc.record({
      parameter: fc.constantFrom("limit", "offset"),
      value: fc.oneof(fc.string().filter((text) => !/^\d+$/.test(text)), fc.constantFrom("-1", "1.5", "1e3", "0x10")),
    });
    await fc.assert(
      fc.asyncProperty(queryCase, async ({ parameter, value }) => {
        const response = await stack.call(`/notes-fetch?${parameter}=${encodeURIComponent(value)}`, {
          token: owner.accessToken,
        });
        expect(response.status, response.text).toBe(400);
        expect(errorMessage(response, "notes")).toContain(parameter);
        expectErrorCode(response, "invalid_request");
      }),
      { numRuns: 100 },
    );
  }, 300_000);
});

describe("prototype-pollution keys", () => {
  it("do nothing: they neither fill in fields nor change defaults or roles", async () => {
    const pollute = (fields: string, extra: string) => `{${[fields, extra].filter(Boolean).join(",")}}`;
    const tricks = [
      '"__proto__":{"title":"polluted","status":"PUBLISHED","role":"ADMIN"}',
      '"constructor":{"prototype":{"title":"polluted","status":"PUBLISHED","role":"ADMIN"}}',
    ];
    for (const trick of tricks) {
      const empty = await stack.call("/notes-create", { token: owner.accessToken, body: pollute("", trick) });
      expect(errorMessage(empty, "notes")).toBe("At least one of title or content is required");
      expectErrorCode(empty, "invalid_request");

      const created = await stack.call("/notes-create", {
        token: owner.accessToken,
        body: pollute('"content":"plain"', trick),
      });
      expect(created.status, created.text).toBe(201);
      expect(noteEnvelope.parse(created.body).data).toMatchObject({ title: "", content: "plain", status: "DRAFT" });

      const registered = await stack.call("/auth/register", {
        body: pollute(
          `"name":"Proto","email":"proto-${tricks.indexOf(trick)}@example.com","password":"long enough"`,
          trick,
        ),
      });
      expect(expectSession(registered, 201).payload.role).toBe("STANDARD_USER");
    }
    // Nothing leaked into later requests either.
    const later = await stack.call("/notes-create", { token: owner.accessToken, body: { content: "later" } });
    expect(noteEnvelope.parse(later.body).data).toMatchObject({ title: "", status: "DRAFT" });
    // notes-fetch refuses parameters it does not know, these included, and names them.
    const fetched = await stack.call("/notes-fetch?__proto__=1&constructor=2&limit=1", { token: owner.accessToken });
    expect(fetched.status, fetched.text).toBe(400);
    expectErrorCode(fetched, "invalid_request");
    expect((fetched.body as { fields: { field: string }[] }).fields.map(({ field }) => field)).toEqual([
      "__proto__",
      "constructor",
    ]);
    expect((await stack.call("/notes-fetch?limit=1", { token: owner.accessToken })).status).toBe(200);
  });
});
