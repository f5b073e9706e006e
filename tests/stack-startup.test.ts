/**
 * What `npm start` says about its configuration: it stops on a setting that
 * is wrong (a JWT secret that would sign weak tokens) with the reason, and it
 * warns loudly when it runs on the public development defaults.
 */
import { describe, expect, it } from "vitest";
import { call, stackLog, waitForLog } from "./support/api.ts";
import { expectAuthError } from "./support/auth.ts";
import { startStack } from "../dev/harness/stack.ts";

/** The documented development `apikey` (dev/settings.ts). */
const devAnonKey = "local-dev-anon-key-not-for-production";
const publishableKey = "sb_publishable_startup_test_key";

describe("starting the stack", () => {
  // Each rule of the configuration is tested once, in tests/unit/config.test.ts; this is the path from a
  // broken setting to what the developer reads.
  it("refuses a JWT_SECRET shorter than 32 bytes, saying why", async () => {
    await expect(startStack({ env: { JWT_SECRET: "short" } })).rejects.toThrow(
      /The stack did not start: JWT_SECRET is 5 bytes; HS256 needs at least 32/,
    );
  });

  it("warns loudly on default secrets, prints its apikey, and accepts it and the publishable keys", async () => {
    const stack = await startStack({
      env: {
        JWT_SECRET: "",
        SUPABASE_ANON_KEY: "",
        SUPABASE_PUBLISHABLE_KEYS: JSON.stringify({ default: publishableKey }),
      },
    });
    try {
      const warnings = /WARNING: (JWT_SECRET|SUPABASE_ANON_KEY) is not set; using the public development default/g;
      const warned = await waitForLog(
        (text) => {
          const names = [...text.matchAll(warnings)].map((match) => match[1]);
          return names.length === 2 ? names.sort() : undefined;
        },
        "warnings about both defaults",
        stack.logFile,
      );
      expect(warned).toEqual(["JWT_SECRET", "SUPABASE_ANON_KEY"]);
      const log = stackLog(stack.logFile);
      expect(log).toContain("Never deploy with it.");
      expect(log).toContain(`apikey:    ${devAnonKey}`);
      expect(log).toContain(`Base URL:  ${stack.baseUrl}`);
      const docs = /API docs: {2}(\S+)/.exec(log)?.[1] ?? "";
      expect(docs).toBe(`${new URL(stack.baseUrl).origin}/docs`);
      const page = await fetch(docs);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("swagger-ui");

      const body = { email: "nobody@example.com", password: "whatever password" };
      for (const apiKey of [devAnonKey, publishableKey]) {
        // Past the apikey gate: the credentials, not the key, are refused.
        const response = await call("/auth/login", { body, apiKey, baseUrl: stack.baseUrl });
        expect(expectAuthError(response, 401).message).toBe("Invalid email or password");
      }
      const wrongKey = await call("/auth/login", { body, apiKey: "test-anon-key", baseUrl: stack.baseUrl });
      expect(expectAuthError(wrongKey, 401).message).toBe("Invalid apikey");
    } finally {
      await stack.stop();
    }
    // Starting a stack on a fresh PGlite takes a while on a busy machine.
  }, 120_000);

  it("does not warn when the secrets are set", () => {
    // The run's shared stack is started with its own JWT_SECRET and SUPABASE_ANON_KEY.
    expect(stackLog()).toContain("Ready on ");
    expect(stackLog()).not.toMatch(/WARNING: (JWT_SECRET|SUPABASE_ANON_KEY) is not set/);
  });
});
