import { describe, expect, it } from "vitest";
import { generateCode, resetCodeMail } from "../../supabase/functions/_shared/auth/one-time-codes.ts";

describe("reset codes", () => {
  it("are six digits, zero-padded, and practically never repeat", () => {
    const codes = Array.from({ length: 2_000 }, generateCode);
    for (const code of codes) expect(code).toMatch(/^\d{6}$/);
    // About 2 collisions are expected among 2,000 draws from a million.
    expect(new Set(codes).size).toBeGreaterThan(1_980);
    // One code in ten starts with 0; a generator that dropped the padding would give none.
    expect(codes.some((code) => code.startsWith("0"))).toBe(true);
  });

  it("travel in a mail that states the code and its lifetime", () => {
    const mail = resetCodeMail("012345");
    expect(mail.subject).toBe("Your password reset code");
    expect(mail.body).toBe("Your password reset code is 012345. It expires in 15 minutes.");
  });
});
