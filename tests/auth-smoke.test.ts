import { describe, expect, it } from "vitest";
import { call, readResetCode, registerUser } from "./support/api.ts";

describe("auth smoke", () => {
  it("registers, resets and logs in", async () => {
    const user = await registerUser("smoke");
    expect(user.accessToken).toMatch(/^Bearer /);
    await call("/auth/request-password-reset", { body: { email: user.email } });
    const code = await readResetCode(user.email);
    const set = await call("/auth/create-password", { body: { email: user.email, password: "another secret", code } });
    expect(set.status).toBe(200);
    const login = await call("/auth/login", { body: { email: user.email, password: "another secret" } });
    expect(login.status).toBe(200);
  });
});
