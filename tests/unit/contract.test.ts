import { describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  createPasswordBody,
  loginBody,
  registerBody,
  requestPasswordResetBody,
  user,
} from "../../supabase/functions/_shared/contract/mod.ts";
import { fieldProblems } from "../../supabase/functions/_shared/http/request.ts";

/** The 400 message the API would give for `input`, or undefined when it is valid. */
function messageFor(schema: z.ZodType, input: unknown): string | undefined {
  const result = schema.safeParse(input);
  return result.success ? undefined : fieldProblems(result.error)[0]?.message;
}

const valid = { name: "Ada", email: "ada@example.com", password: "long enough" };

describe("auth request bodies", () => {
  it("normalise the email: trimmed and lower-cased", () => {
    expect(loginBody.parse({ email: "  Ada@Example.COM\t", password: "x" }).email).toBe("ada@example.com");
    expect(requestPasswordResetBody.parse({ email: " ADA@example.com" }).email).toBe("ada@example.com");
  });

  it.each([
    [{ ...valid, name: undefined }, "name is required"],
    [{ ...valid, name: null }, "name must be a string"],
    [{ ...valid, name: " \t " }, "name must not be empty"],
    [{ ...valid, name: "n".repeat(201) }, "name must be at most 200 characters"],
    [{ ...valid, email: undefined }, "email is required"],
    [{ ...valid, email: 1 }, "email must be a string"],
    [{ ...valid, email: "ada@" }, "email must be a valid email address"],
    [{ ...valid, email: `${"a".repeat(243)}@example.com` }, "email must be at most 254 characters"],
    [{ ...valid, password: undefined }, "password is required"],
    [{ ...valid, password: true }, "password must be a string"],
    [{ ...valid, password: "seven77" }, "password must be at least 8 characters"],
    [{ ...valid, password: "a".repeat(73) }, "password must be at most 72 bytes"],
    [{ ...valid, password: "long enough\u0000" }, "password must not contain NUL characters"],
    [{ ...valid, password: "long enough\uD800" }, "password must be valid Unicode"],
  ])("register %j -> %s", (input, message) => {
    expect(messageFor(registerBody, input)).toBe(message);
  });

  it("register accepts 8 characters and 72 bytes, whatever their encoding", () => {
    for (const password of ["a".repeat(8), "a".repeat(72), "😀".repeat(8), "€".repeat(24), "ß".repeat(36)]) {
      expect(messageFor(registerBody, { ...valid, password })).toBeUndefined();
    }
    expect(messageFor(registerBody, { ...valid, password: "ß".repeat(37) })).toBe("password must be at most 72 bytes");
  });

  it("login checks only that the password is a string: lengths are register's rule", () => {
    expect(messageFor(loginBody, { email: "ada@example.com", password: "short" })).toBeUndefined();
    expect(messageFor(loginBody, { email: "ada@example.com" })).toBe("password is required");
  });

  it.each([
    [{ email: "ada@example.com", password: "long enough" }, "code is required"],
    [{ email: "ada@example.com", password: "long enough", code: "12345" }, "code must be 6 digits"],
    [{ email: "ada@example.com", password: "long enough", code: " 123456" }, "code must be 6 digits"],
    [{ email: "ada@example.com", password: "long enough", code: "１２３４５６" }, "code must be 6 digits"],
    [{ email: "ada@example.com", password: "short", code: "123456" }, "password must be at least 8 characters"],
  ])("create-password %j -> %s", (input, message) => {
    expect(messageFor(createPasswordBody, input)).toBe(message);
  });
});

describe("the user record", () => {
  const record = {
    id: "7b3c1b8e-58f6-4d6e-9d64-1f7e3f0f8a11",
    name: "Ada",
    phoneNumber: null,
    email: "ada@example.com",
    role: "STANDARD_USER",
    status: "ACTIVE",
    isVerified: false,
    createdAt: "2026-01-02T03:04:05.678Z",
    updatedAt: "2026-01-02T03:04:05.678Z",
  };

  it("accepts the interface's shape", () => {
    expect(user.parse(record)).toEqual(record);
  });

  it("requires UTC timestamps with milliseconds", () => {
    for (const createdAt of ["2026-01-02T03:04:05Z", "2026-01-02T03:04:05.678+01:00", "2026-01-02 03:04:05.678"]) {
      expect(user.safeParse({ ...record, createdAt }).success).toBe(false);
    }
  });

  it("knows only the interface's roles and statuses", () => {
    expect(user.safeParse({ ...record, role: "USER" }).success).toBe(false);
    expect(user.safeParse({ ...record, status: "DELETED" }).success).toBe(false);
  });
});
