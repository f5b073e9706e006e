/**
 * A login flood cannot starve other users: 300 clients send logins as fast as
 * they are answered, from an address the stack lets through (so every one
 * reaches bcrypt), while another user reads their notes. bcrypt runs in the
 * function, a few hashes at a time per isolate, and the rest are answered 503
 * at once; Postgres does none of it. The bench (`npm run bench`) reports the
 * probe's latencies beside the same flood.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loginFlood } from "../../bench/login-flood.ts";
import { anonKey, registerUser } from "../support/api.ts";
import { type ScratchStack, startScratchStack } from "../support/scratch-stack.ts";

let stack: ScratchStack;

beforeAll(async () => {
  // The production bcrypt cost and hashing bounds; only the per-address login limit is lifted, as a flood from
  // many addresses would not meet it.
  stack = await startScratchStack("login_flood", { env: { LOGIN_MAX_ATTEMPTS_PER_ADDRESS: "1000000" } });
});

afterAll(async () => {
  await stack?.stop();
});

describe("300 concurrent logins", () => {
  it(
    "leave another user's notes calls all successful, and are answered 401, or 503 once too many hashes wait",
    async () => {
      const reader = await registerUser("reader", { baseUrl: stack.baseUrl });
      const flood = await loginFlood(stack.baseUrl, {
        apiKey: anonKey,
        probeAuthorization: reader.accessToken,
        connections: 300,
        seconds: 8,
      });
      expect(Object.keys(flood.probeStatuses)).toEqual(["200"]);
      expect(flood.probeLatencies.length).toBeGreaterThan(5);
      // Every login was checked (401) or turned away at once (503); none failed otherwise.
      expect(Object.keys(flood.floodStatuses).sort()).toEqual(["401", "503"]);
    },
    60_000,
  );
});
