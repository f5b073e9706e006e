import { describe, expect, it } from "vitest";
import { limits } from "../supabase/functions/_shared/contract/mod.ts";
import { call, registerUser, uniqueEmail } from "./support/api.ts";
import { decodeAccessToken, expectAuthError, expectSession, pathsOf } from "./support/auth.ts";

describe("POST /auth/login", () => {
  it.each(pathsOf("login"))("signs a registered user in through %s", async (path) => {
    const user = await registerUser("login");
    const response = await call(path, { body: { email: user.email, password: user.password } });
    const { payload, accessToken } = expectSession(response, 200);

    expect(response.body).toMatchObject({ message: expect.stringMatching(/login successful/i) });
    expect(payload).toMatchObject({
      id: user.id,
      email: user.email,
      name: "Test login",
      phoneNumber: null,
      role: "STANDARD_USER",
      status: "ACTIVE",
      isVerified: false,
    });
    const { claims } = decodeAccessToken(accessToken);
    expect(claims).toMatchObject({ sub: user.id, role: "authenticated", aud: "authenticated", email: user.email });
    expect(claims.exp).toBe((claims.iat ?? 0) + limits.accessTokenSeconds);
    expect(response.headers.get("cache-control")).toBe("no-store");
  });

  it("answers 401 with one message for an unknown email and for a wrong password", async () => {
    const user = await registerUser("wrong");
    const wrongPassword = expectAuthError(
      await call("/auth/login", { body: { email: user.email, password: "not the password" } }),
      401,
    );
    const unknownEmail = expectAuthError(
      await call("/auth/login", { body: { email: uniqueEmail("nobody"), password: user.password } }),
      401,
    );
    expect(wrongPassword.message).toMatch(/invalid/i);
    expect(unknownEmail).toEqual(wrongPassword);
  });

  it("compares the password exactly: case and surrounding spaces matter", async () => {
    const user = await registerUser("exact");
    for (const variant of [user.password.toUpperCase(), ` ${user.password}`, `${user.password} `]) {
      expectAuthError(await call("/auth/login", { body: { email: user.email, password: variant } }), 401);
    }
  });

  it("answers 401, not 400, for a password too short or too long to have been registered", async () => {
    const user = await registerUser("length");
    for (const password of ["short", "p".repeat(200)]) {
      expectAuthError(await call("/auth/login", { body: { email: user.email, password } }), 401);
    }
  });

  it.each([
    [{ password: "whatever1" }, /email is required/],
    [{ email: "someone@example.com" }, /password is required/],
    [{ email: 7, password: "whatever1" }, /email must be a string/],
    [{ email: "someone@example.com", password: null }, /password must be a string/],
    [{ email: "no-at-sign", password: "whatever1" }, /email must be a valid email address/],
  ])("answers 400 naming the field for %j", async (body, message) => {
    expect(expectAuthError(await call("/auth/login", { body }), 400).message).toMatch(message);
  });
});
