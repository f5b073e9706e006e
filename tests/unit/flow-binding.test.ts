import { describe, expect, it } from "vitest";
import {
  bindingCookie,
  newBrowserBinding,
  presentedBinding,
  spentBinding,
} from "../../supabase/functions/_shared/auth/flow-binding.ts";

const jwtSecret = new TextEncoder().encode("test-jwt-secret-of-at-least-thirty-two-bytes!");
const stateHash = "ab".repeat(32);
const hosted = "https://ref.supabase.co/functions/v1/auth/oauth/callback/google";

function attributesOf(cookie: string): string[] {
  return cookie.split("; ").slice(1).map((attribute) => attribute.toLowerCase());
}

describe("the cookie that binds a provider flow to its browser", () => {
  it("is Secure over https, HttpOnly, SameSite=Lax, for the provider's callback only, as long as the flow", async () => {
    const cookie = bindingCookie(stateHash, await newBrowserBinding(jwtSecret), hosted);
    expect(attributesOf(cookie).sort()).toEqual(
      ["httponly", "max-age=600", "path=/functions/v1/auth/oauth/callback/google", "samesite=lax", "secure"],
    );
  });

  it("is not Secure over plain http, where a Secure cookie would never come back", async () => {
    const local = "http://127.0.0.1:54321/functions/v1/auth/oauth/callback/local";
    expect(attributesOf(bindingCookie(stateHash, await newBrowserBinding(jwtSecret), local))).not.toContain("secure");
  });

  it("comes back as the HMAC the flow keeps, for its own flow only, and is removed once spent", async () => {
    const binding = await newBrowserBinding(jwtSecret);
    expect(binding.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(binding.hash).not.toContain(binding.value);
    const pair = bindingCookie(stateHash, binding, hosted).split(";")[0];
    const request = (cookie: string) => new Request(hosted, { headers: { cookie } });
    expect(await presentedBinding(request(`other=1; ${pair}`), jwtSecret, stateHash)).toBe(binding.hash);
    expect(await presentedBinding(request(pair), jwtSecret, "cd".repeat(32))).toBeUndefined();
    expect(await presentedBinding(request(""), jwtSecret, stateHash)).toBeUndefined();
    expect(spentBinding(stateHash, hosted)).toMatch(/^notes_flow_[0-9a-f]{16}=; Max-Age=0; Path=\/functions\/v1\//);
  });
});
