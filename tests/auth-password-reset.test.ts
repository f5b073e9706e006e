/**
 * The reset flow end to end, reading each code from the stack's log as a
 * developer does locally: request-password-reset, then create-password.
 */
import { describe, expect, it } from "vitest";
import { authSuccessEnvelope } from "../supabase/functions/_shared/contract/mod.ts";
import { z } from "zod";
import {
  type ApiResponse,
  call,
  countResetMails,
  readResetCode,
  registerUser,
  uniqueEmail,
  waitForLog,
} from "./support/api.ts";
import { decodeAccessToken, expectAuthError, expectSession, pathsOf } from "./support/auth.ts";

const resetRequested = authSuccessEnvelope(z.object({}).strict());
const newPassword = "a brand new passphrase";

/** Requests a reset for `email` and returns the code mailed for it. */
async function requestCode(email: string): Promise<string> {
  const before = countResetMails(email);
  const response = await call("/auth/request-password-reset", { body: { email } });
  expect(response.status).toBe(200);
  return await readResetCode(email, before);
}

function createPassword(body: Record<string, unknown>, path = "/auth/create-password"): Promise<ApiResponse> {
  return call(path, { body });
}

/** A six-digit code that is not `code`. */
function otherThan(code: string): string {
  return String((Number(code) + 1) % 1_000_000).padStart(6, "0");
}

describe("POST /auth/request-password-reset", () => {
  it.each(pathsOf("request-password-reset"))(
    "answers 200 with the same body for a known and an unknown email through %s, mailing only the known",
    async (path) => {
      const user = await registerUser("reset-known");
      const unknown = uniqueEmail("reset-unknown");
      const forUnknown = await call(path, { body: { email: unknown } });
      const forKnown = await call(path, { body: { email: user.email } });

      for (const response of [forUnknown, forKnown]) {
        expect(response.status).toBe(200);
        expect(resetRequested.parse(response.body).statusCode).toBe(200);
      }
      expect(forKnown.body).toEqual(forUnknown.body);
      expect(forKnown.body).toMatchObject({ message: expect.stringMatching(/if an account exists/i) });

      const code = await readResetCode(user.email);
      expect(code).toMatch(/^\d{6}$/);
      // The known user's mail has been printed, and the outbox is printed in order: none went to the stranger.
      expect(countResetMails(unknown)).toBe(0);
    },
  );

  it("finds the account whatever the case and spacing of the email", async () => {
    const user = await registerUser("reset-case");
    const response = await call("/auth/request-password-reset", { body: { email: `  ${user.email.toUpperCase()} ` } });
    expect(response.status).toBe(200);
    expect(await readResetCode(user.email)).toMatch(/^\d{6}$/);
  });

  it("answers 400 naming the email when it is missing or not an email", async () => {
    expect(expectAuthError(await call("/auth/request-password-reset", { body: {} }), 400).message).toBe(
      "email is required",
    );
    expect(
      expectAuthError(await call("/auth/request-password-reset", { body: { email: "nope" } }), 400).message,
    ).toMatch(/email must be a valid email address/);
  });
});

describe("POST /auth/create-password", () => {
  it.each(pathsOf("create-password"))(
    "sets the password, verifies the account and signs it in through %s",
    async (path) => {
      const user = await registerUser("create");
      const code = await requestCode(user.email);
      const response = await createPassword({ email: user.email, password: newPassword, code }, path);
      const { payload, accessToken } = expectSession(response, 200);

      expect(response.body).toMatchObject({ message: expect.stringMatching(/password set/i) });
      expect(payload).toMatchObject({ id: user.id, email: user.email, isVerified: true, status: "ACTIVE" });
      expect(Date.parse(payload.updatedAt)).toBeGreaterThanOrEqual(Date.parse(payload.createdAt));
      expect(accessToken).not.toBe(user.accessToken);
      const { claims } = decodeAccessToken(accessToken);
      expect(claims).toMatchObject({ sub: user.id, email: user.email, aud: "authenticated", role: "authenticated" });
      expect(claims.exp).toBe((claims.iat ?? 0) + 7_200);

      expectAuthError(await call("/auth/login", { body: { email: user.email, password: user.password } }), 401);
      const login = expectSession(
        await call("/auth/login", { body: { email: user.email, password: newPassword } }),
        200,
      );
      expect(login.payload.isVerified).toBe(true);
    },
  );

  it("answers 404 for an email without an account", async () => {
    const error = expectAuthError(
      await createPassword({ email: uniqueEmail("ghost"), password: newPassword, code: "123456" }),
      404,
    );
    expect(error.message).toMatch(/user not found/i);
  });

  it("answers 400 for a wrong code and leaves the password alone", async () => {
    const user = await registerUser("wrong-code");
    const code = await requestCode(user.email);
    const error = expectAuthError(
      await createPassword({ email: user.email, password: newPassword, code: otherThan(code) }),
      400,
    );
    expect(error.message).toBe("Invalid or expired code");
    expectSession(await call("/auth/login", { body: { email: user.email, password: user.password } }), 200);
    expectAuthError(await call("/auth/login", { body: { email: user.email, password: newPassword } }), 401);
  });

  it("answers 400 for a user who never asked for a code", async () => {
    const user = await registerUser("no-code");
    expectAuthError(await createPassword({ email: user.email, password: newPassword, code: "123456" }), 400);
  });

  it("kills the code after five wrong tries", async () => {
    const user = await registerUser("five");
    const code = await requestCode(user.email);
    for (let attempt = 0; attempt < 5; attempt++) {
      expectAuthError(await createPassword({ email: user.email, password: newPassword, code: otherThan(code) }), 400);
    }
    const error = expectAuthError(await createPassword({ email: user.email, password: newPassword, code }), 400);
    expect(error.message).toBe("Invalid or expired code");
    // A new request issues a live code again.
    expectSession(
      await createPassword({ email: user.email, password: newPassword, code: await requestCode(user.email) }),
      200,
    );
  });

  it("accepts the right code after four wrong tries", async () => {
    const user = await registerUser("four");
    const code = await requestCode(user.email);
    for (let attempt = 0; attempt < 4; attempt++) {
      expectAuthError(await createPassword({ email: user.email, password: newPassword, code: otherThan(code) }), 400);
    }
    expectSession(await createPassword({ email: user.email, password: newPassword, code }), 200);
  });

  it("accepts a code once", async () => {
    const user = await registerUser("once");
    const code = await requestCode(user.email);
    expectSession(await createPassword({ email: user.email, password: newPassword, code }), 200);
    const error = expectAuthError(
      await createPassword({ email: user.email, password: "yet another passphrase", code }),
      400,
    );
    expect(error.message).toBe("Invalid or expired code");
    expectSession(await call("/auth/login", { body: { email: user.email, password: newPassword } }), 200);
  });

  it("replaces the previous code with each new request", async () => {
    const user = await registerUser("replace");
    const first = await requestCode(user.email);
    let second = await requestCode(user.email);
    // One pair in a million is equal; ask again rather than test nothing.
    while (second === first) second = await requestCode(user.email);
    expectAuthError(await createPassword({ email: user.email, password: newPassword, code: first }), 400);
    expectSession(await createPassword({ email: user.email, password: newPassword, code: second }), 200);
  });

  it("validates the new password before it spends the code", async () => {
    const user = await registerUser("validate");
    const code = await requestCode(user.email);
    const tooShort = expectAuthError(await createPassword({ email: user.email, password: "short", code }), 400);
    expect(tooShort.message).toBe("password must be at least 8 characters");
    const tooLong = expectAuthError(await createPassword({ email: user.email, password: "€".repeat(25), code }), 400);
    expect(tooLong.message).toBe("password must be at most 72 bytes");
    expectSession(await createPassword({ email: user.email, password: newPassword, code }), 200);
  });

  it.each([
    [{ password: newPassword, code: "123456" }, "email is required"],
    [{ email: "someone@example.com", code: "123456" }, "password is required"],
    [{ email: "someone@example.com", password: newPassword }, "code is required"],
    [{ email: "someone@example.com", password: newPassword, code: 123456 }, "code must be a string"],
    [{ email: "someone@example.com", password: newPassword, code: "12345" }, "code must be 6 digits"],
    [{ email: "someone@example.com", password: newPassword, code: "1234567" }, "code must be 6 digits"],
    [{ email: "someone@example.com", password: newPassword, code: "12a456" }, "code must be 6 digits"],
  ])("answers 400 naming the field for %j", async (body, message) => {
    expect(expectAuthError(await createPassword(body), 400).message).toBe(message);
  });

  it("never shows a password, a code or a hash in a response or the request log", async () => {
    const user = await registerUser("leak");
    const code = await requestCode(user.email);
    const secret = `leak-check-${code}-passphrase`;
    const responses = [
      await createPassword({ email: user.email, password: secret, code: otherThan(code) }),
      await createPassword({ email: user.email, password: secret, code }),
      await call("/auth/login", { body: { email: user.email, password: secret } }),
      await call("/auth/login", { body: { email: user.email, password: "wrong-but-long-enough" } }),
    ];
    for (const response of responses) {
      expect(response.text).not.toContain(secret);
      expect(response.text).not.toContain(code);
      expect(response.text).not.toMatch(/\$2[aby]\$\d\d\$/);
    }
    // The only line with the code is the printed mail itself; the password is nowhere. The stack writes
    // its log a few milliseconds late, so the read waits for the last answer's line.
    const lastRequestId = responses.at(-1)?.headers.get("x-request-id") ?? "";
    const log = await waitForLog((text) => text.includes(lastRequestId) ? text : undefined, "the last request's line");
    expect(log).not.toContain(secret);
    expect(log).not.toContain("wrong-but-long-enough");
    const linesWithCode = log.split("\n").filter((line) => new RegExp(`\\b${code}\\b`).test(line));
    expect(linesWithCode.length).toBeGreaterThan(0);
    expect(linesWithCode.filter((line) => !line.startsWith("[mail] "))).toEqual([]);
  });
});
