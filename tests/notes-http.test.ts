import { beforeAll, describe, expect, it } from "vitest";
import { call, type RegisteredUser, registerUser } from "./support/api.ts";
import { jwtOf } from "./support/auth.ts";
import { allNotes, createNote, expectNotesError } from "./support/notes.ts";
import { claimsOf, signToken, unsignedToken } from "./support/tokens.ts";
import { notesErrorEnvelope, type TokenErrorCode } from "../supabase/functions/_shared/contract/mod.ts";

let ada: RegisteredUser;
let noteId: string;

beforeAll(async () => {
  ada = await registerUser("notes-http");
  noteId = (await createNote(ada, { title: "Target" })).id;
});

/** Each notes endpoint with a request it would serve for Ada, given an Authorization header. */
const endpoints = [
  { name: "notes-create", method: "POST", path: () => "/notes-create", body: () => ({ title: "New" }) },
  { name: "notes-fetch", method: "GET", path: () => "/notes-fetch", body: () => undefined },
  { name: "notes-save", method: "POST", path: () => "/notes-save", body: () => ({ id: noteId, title: "Saved" }) },
  { name: "notes-delete", method: "DELETE", path: () => `/notes-delete?id=${noteId}`, body: () => undefined },
] as const;

type Endpoint = (typeof endpoints)[number];

function callWith(endpoint: Endpoint, authorization: string | undefined) {
  return call(endpoint.path(), {
    method: endpoint.method,
    body: endpoint.body(),
    headers: authorization === undefined ? {} : { Authorization: authorization },
  });
}

const hour = 3600;

type Authorization = (user: RegisteredUser) => Promise<string | undefined> | string | undefined;

/** Authorization headers that must each be refused, built for Ada, with the 401's `code`. */
const refusedAuthorizations: [string, TokenErrorCode, Authorization][] = [
  ["no Authorization header", "token_missing", () => undefined],
  ["an empty header", "token_missing", () => ""],
  ["the bare JWT without Bearer", "token_invalid", (user) => jwtOf(user.accessToken)],
  ["another scheme", "token_invalid", (user) => `Basic ${jwtOf(user.accessToken)}`],
  ["Bearer and no token", "token_invalid", () => "Bearer "],
  ["Bearer and text that is not a JWT", "token_invalid", () => "Bearer not-a-token"],
  ["Bearer three times", "token_invalid", (user) => `Bearer Bearer ${user.accessToken}`],
  ["a JWT with a changed payload", "token_invalid", (user) => {
    const [header, , signature] = jwtOf(user.accessToken).split(".");
    const forgedPayload = Buffer.from(JSON.stringify({ ...claimsOf(user), app_role: "ADMIN" })).toString("base64url");
    return `Bearer ${header}.${forgedPayload}.${signature}`;
  }],
  [
    "a token signed with another secret",
    "token_invalid",
    async (user) => `Bearer ${await signToken(claimsOf(user), { secret: "some-other-secret-of-at-least-32-bytes!!" })}`,
  ],
  ["an unsigned token (alg none)", "token_invalid", (user) => `Bearer ${unsignedToken(claimsOf(user))}`],
  [
    "a token of another HMAC algorithm (HS512)",
    "token_invalid",
    async (user) => `Bearer ${await signToken(claimsOf(user), { alg: "HS512" })}`,
  ],
  ["an expired token", "token_expired", async (user) => {
    const now = Math.floor(Date.now() / 1000);
    return `Bearer ${await signToken({ ...claimsOf(user), iat: now - 3 * hour, exp: now - hour })}`;
  }],
  // Expiry is reported only for a genuine token: a forger learns nothing from it.
  ["an expired token signed with another secret", "token_invalid", async (user) => {
    const now = Math.floor(Date.now() / 1000);
    const claims = { ...claimsOf(user), iat: now - 3 * hour, exp: now - hour };
    return `Bearer ${await signToken(claims, { secret: "some-other-secret-of-at-least-32-bytes!!" })}`;
  }],
  [
    "a token without exp",
    "token_invalid",
    async (user) => `Bearer ${await signToken({ ...claimsOf(user), exp: undefined })}`,
  ],
  [
    "a token of another audience",
    "token_invalid",
    async (user) => `Bearer ${await signToken({ ...claimsOf(user), aud: "anon" })}`,
  ],
  [
    "a token without audience",
    "token_invalid",
    async (user) => `Bearer ${await signToken({ ...claimsOf(user), aud: undefined })}`,
  ],
  [
    "a token with role anon",
    "token_invalid",
    async (user) => `Bearer ${await signToken({ ...claimsOf(user), role: "anon" })}`,
  ],
  [
    "a token with role service_role",
    "token_invalid",
    async (user) => `Bearer ${await signToken({ ...claimsOf(user), role: "service_role" })}`,
  ],
  [
    "a token whose subject is not a user id",
    "token_invalid",
    async (user) => `Bearer ${await signToken({ ...claimsOf(user), sub: "admin" })}`,
  ],
];

describe.each(endpoints)("$name", (endpoint) => {
  it.each(refusedAuthorizations)("answers 401 to %s with code %s", async (_case, code, authorization) => {
    const response = await callWith(endpoint, await authorization(ada));
    expectNotesError(response, 401);
    expect(notesErrorEnvelope.parse(response.body).code).toBe(code);
    // RFC 6750: no error code when no token came; invalid_token for every token refused.
    expect(response.headers.get("www-authenticate")).toEqual(
      code === "token_missing" ? "Bearer" : expect.stringMatching(/^Bearer error="invalid_token", error_description="/),
    );
    // Nothing about the token or the verifier leaks into the answer.
    expect(response.text).not.toMatch(/jose|JWS|JWT[A-Z]|stack|at .*\.ts/);
  });

  it.each([
    ["the bare JWT without Bearer", (user: RegisteredUser) => jwtOf(user.accessToken)],
    ["another scheme", (user: RegisteredUser) => `Basic ${jwtOf(user.accessToken)}`],
  ])("says the header's form when it gets %s", async (_case, authorization) => {
    const response = await callWith(endpoint, authorization(ada));
    expect(notesErrorEnvelope.parse(response.body).error).toContain("Authorization: Bearer <accessToken>");
  });

  it("accepts a token the test signs exactly as the service does, so the refusals above are about the token", async () => {
    const response = await callWith(endpoint, `Bearer ${await signToken(claimsOf(ada))}`);
    expect(response.status, response.text).toBeLessThan(300);
    if (endpoint.name === "notes-delete") noteId = (await createNote(ada, { title: "Target again" })).id;
  });

  it('accepts the login\'s "Bearer <jwt>" string sent behind one more Bearer', async () => {
    const response = await callWith(endpoint, `Bearer ${ada.accessToken}`);
    expect(response.status, response.text).toBeLessThan(300);
    if (endpoint.name === "notes-delete") noteId = (await createNote(ada, { title: "Target again" })).id;
  });

  it("answers a CORS preflight with 204 naming its method and allowing the Authorization header", async () => {
    const response = await call(endpoint.path(), {
      method: "OPTIONS",
      headers: {
        Origin: "https://app.example.com",
        "Access-Control-Request-Method": endpoint.method,
        "Access-Control-Request-Headers": "authorization, content-type, x-region",
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("access-control-allow-methods")?.split(/,\s*/)).toContain(endpoint.method);
    expect(response.headers.get("access-control-allow-headers")?.toLowerCase().split(/,\s*/)).toEqual(
      expect.arrayContaining(["authorization", "content-type", "x-region"]),
    );
  });

  it("answers another method with 405, Allow naming its own, in the notes envelope", async () => {
    const wrongMethod = endpoint.method === "GET" ? "POST" : "GET";
    const response = await call(endpoint.path(), { method: wrongMethod, token: ada.accessToken });
    expectNotesError(response, 405);
    expect(response.headers.get("allow")).toBe(endpoint.method);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
  });
});

describe("a refused request changes nothing", () => {
  it("stores no note for a create with a forged token", async () => {
    const before = await allNotes(ada);
    const forged = await signToken(claimsOf(ada), { secret: "some-other-secret-of-at-least-32-bytes!!" });
    expectNotesError(await call("/notes-create", { token: forged, body: { title: "Forged" } }), 401);
    expect(await allNotes(ada)).toEqual(before);
  });
});

describe("an unknown query parameter", () => {
  const bogusProblem = { field: "bogus", message: "bogus is not a query parameter of this endpoint" };

  it("deletes nothing: notes-delete with the note's id and bogus=1 is a 400 naming it, and the note stays", async () => {
    const response = await call(`/notes-delete?id=${noteId}&bogus=1`, { method: "DELETE", token: ada.accessToken });
    expectNotesError(response, 400);
    expect(notesErrorEnvelope.parse(response.body).fields).toEqual([bogusProblem]);
    const kept = await call(`/notes-get?id=${noteId}`, { token: ada.accessToken });
    expect(kept.status, kept.text).toBe(200);
  });

  it("is a 400 naming it on every notes endpoint, and nothing is done", async () => {
    const before = await allNotes(ada);
    // Each notes endpoint, with a request it would serve for Ada but for `bogus=1` in its query.
    const requests = [
      { path: "/notes-create?bogus=1", method: "POST", body: { title: "Not made" } },
      { path: "/notes-fetch?limit=1&bogus=1", method: "GET" },
      { path: "/notes-changes?bogus=1", method: "GET" },
      { path: `/notes-get?id=${noteId}&bogus=1`, method: "GET" },
      { path: "/notes-save?bogus=1", method: "POST", body: { id: noteId, title: "Not saved" } },
      { path: `/notes-delete?id=${noteId}&bogus=1`, method: "DELETE" },
    ];
    for (const { path, ...request } of requests) {
      const response = await call(path, { ...request, token: ada.accessToken });
      expect(expectNotesError(response, 400), path).toBe(bogusProblem.message);
      expect(notesErrorEnvelope.parse(response.body).fields).toEqual([bogusProblem]);
    }
    // The create made nothing, the save saved nothing and the delete deleted nothing.
    expect(await allNotes(ada)).toEqual(before);
  });

  it("is named with every other one, each once, while the platform's forceFunctionRegion is let through", async () => {
    const response = await call(`/notes-get?id=${noteId}&forceFunctionRegion=eu-central-1&b=1&a=2&b=3`, {
      token: ada.accessToken,
    });
    expectNotesError(response, 400);
    expect(notesErrorEnvelope.parse(response.body).fields?.map((problem) => problem.field)).toEqual(["b", "a"]);
    const allowed = await call(`/notes-get?id=${noteId}&forceFunctionRegion=eu-central-1`, { token: ada.accessToken });
    expect(allowed.status, allowed.text).toBe(200);
  });
});
