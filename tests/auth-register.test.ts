import { describe, expect, it } from "vitest";
import { limits } from "../supabase/functions/_shared/contract/mod.ts";
import { call, uniqueEmail } from "./support/api.ts";
import { decodeAccessToken, expectAuthError, expectSession } from "./support/auth.ts";

const password = "correct horse battery";

function register(body: Record<string, unknown>) {
  return call("/auth/register", { body });
}

describe("POST /auth/register", () => {
  it("creates an active, unverified standard user and signs it in", async () => {
    const email = uniqueEmail("register");
    const before = Date.now();
    const response = await register({ name: "Ada Lovelace", email, password });
    const { payload, accessToken } = expectSession(response, 201);

    expect(response.body).toMatchObject({ message: expect.stringMatching(/registered/i) });
    expect(payload).toMatchObject({
      name: "Ada Lovelace",
      email,
      phoneNumber: null,
      role: "STANDARD_USER",
      status: "ACTIVE",
      isVerified: false,
    });
    expect(payload.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    for (const timestamp of [payload.createdAt, payload.updatedAt]) {
      expect(timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      // Generous bounds: the clock of the database, not of this process, stamps the row.
      expect(Math.abs(Date.parse(timestamp) - before)).toBeLessThan(60_000);
    }
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);

    const { header, claims } = decodeAccessToken(accessToken);
    expect(header.alg).toBe("HS256");
    expect(claims).toMatchObject({
      sub: payload.id,
      role: "authenticated",
      aud: "authenticated",
      email,
      app_role: "STANDARD_USER",
    });
    expect(claims.exp).toBe((claims.iat ?? 0) + limits.accessTokenSeconds);
    expect(limits.accessTokenSeconds).toBe(2 * 60 * 60);
  });

  it("trims the email and stores it lower-cased, and the name trimmed", async () => {
    const email = uniqueEmail("trim");
    const { payload } = expectSession(
      await register({ name: "  Grace Hopper  ", email: `  ${email.toUpperCase()}  `, password }),
      201,
    );
    expect(payload.email).toBe(email);
    expect(payload.name).toBe("Grace Hopper");
    const login = await call("/auth/login", { body: { email: ` ${email.toUpperCase()}`, password } });
    expect(expectSession(login, 200).payload.id).toBe(payload.id);
  });

  it("answers 409 for an email already used, whatever its case and spacing", async () => {
    const email = uniqueEmail("taken");
    expectSession(await register({ name: "First", email, password }), 201);
    for (const variant of [email, email.toUpperCase(), `\t${email} `]) {
      const error = expectAuthError(await register({ name: "Second", email: variant, password }), 409);
      expect(error.message).toMatch(/already exists/i);
    }
  });

  it("lets exactly one of many concurrent registers of one email win", async () => {
    const email = uniqueEmail("race");
    const variants = [email, email.toUpperCase(), ` ${email}`, `${email} `, email, email, email, email];
    const responses = await Promise.all(
      variants.map((variant, index) => register({ name: `Racer ${index}`, email: variant, password })),
    );
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    for (const response of responses.filter((response) => response.status === 409)) {
      expectAuthError(response, 409);
    }
    const winner = responses.find((response) => response.status === 201);
    if (!winner) throw new Error("no register won");
    const login = await call("/auth/login", { body: { email, password } });
    expect(expectSession(login, 200).payload).toEqual(expectSession(winner, 201).payload);
  });

  describe("password length: 8 characters to 72 bytes", () => {
    const accepted: [string, string][] = [
      ["8 ASCII characters", "a".repeat(8)],
      ["72 ASCII bytes", "a".repeat(72)],
      ["8 characters of 4 bytes each (32 bytes)", "😀".repeat(8)],
      ["24 characters of 3 bytes each (exactly 72 bytes)", "€".repeat(24)],
      ["71 ASCII bytes and one 1-byte character", `${"a".repeat(71)}b`],
    ];
    const rejected: [string, string, RegExp][] = [
      ["7 ASCII characters", "a".repeat(7), /password must be at least 8 characters/],
      ["7 characters of 4 bytes (28 bytes, but 7 characters)", "😀".repeat(7), /at least 8 characters/],
      ["73 ASCII bytes", "a".repeat(73), /password must be at most 72 bytes/],
      ["25 characters of 3 bytes (75 bytes)", "€".repeat(25), /at most 72 bytes/],
      ["71 ASCII bytes and one 2-byte character (73 bytes)", `${"a".repeat(71)}é`, /at most 72 bytes/],
      ["an empty string", "", /at least 8 characters/],
    ];

    it.each(accepted)("accepts %s, and the same password logs in", async (_label, candidate) => {
      const email = uniqueEmail("pw");
      expectSession(await register({ name: "Password", email, password: candidate }), 201);
      expectSession(await call("/auth/login", { body: { email, password: candidate } }), 200);
    });

    it.each(rejected)("rejects %s with 400", async (_label, candidate, message) => {
      const error = expectAuthError(
        await register({ name: "Password", email: uniqueEmail("pw"), password: candidate }),
        400,
      );
      expect(error.message).toMatch(message);
    });

    it("does not truncate: a 72-byte password does not log in with only its first 71 bytes", async () => {
      const email = uniqueEmail("pw");
      const full = `${"x".repeat(71)}y`;
      expectSession(await register({ name: "Password", email, password: full }), 201);
      expectAuthError(await call("/auth/login", { body: { email, password: `${"x".repeat(71)}z` } }), 401);
    });
  });

  it.each([
    ["name", { email: "missing-name@example.com", password }, /name is required/],
    ["email", { name: "No Email", password }, /email is required/],
    ["password", { name: "No Password", email: "missing-pw@example.com" }, /password is required/],
  ])("answers 400 naming the missing %s", async (_field, body, message) => {
    expect(expectAuthError(await register(body), 400).message).toMatch(message);
  });

  it.each([
    ["name", { name: 42, email: "types@example.com", password }, /name must be a string/],
    ["email", { name: "Types", email: ["a@example.com"], password }, /email must be a string/],
    ["password", { name: "Types", email: "types@example.com", password: 12345678 }, /password must be a string/],
    ["email", { name: "Types", email: "not-an-email", password }, /email must be a valid email address/],
    ["name", { name: "   ", email: "types@example.com", password }, /name must not be empty/],
    [
      "name",
      { name: "n".repeat(limits.nameMaxChars + 1), email: "types@example.com", password },
      /name must be at most/,
    ],
    ["name", { name: "nul\u0000byte", email: "types@example.com", password }, /name must not contain NUL/],
  ])("answers 400 naming a wrong %s", async (_field, body, message) => {
    expect(expectAuthError(await register(body), 400).message).toMatch(message);
  });

  it("never echoes the password or its hash", async () => {
    const secret = `unique-${uniqueEmail("secret")}`;
    const response = await register({ name: "Secretive", email: uniqueEmail("secret"), password: secret });
    expectSession(response, 201);
    expect(response.text).not.toContain(secret);
    expect(response.text).not.toMatch(/\$2[aby]\$/);
    expect(response.text).not.toMatch(/password/i);
  });
});
