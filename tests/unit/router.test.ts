import { afterEach, describe, expect, it, vi } from "vitest";
import { loadedOnFirstRequest, routeBySubpath } from "../../supabase/functions/_shared/http/router.ts";

const post = (path: string) => new Request(`http://localhost/auth${path}`, { method: "POST" });

describe("routeBySubpath with routes loaded on their first request", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("loads a route once for concurrent first requests, and answers from it", async () => {
    let loads = 0;
    const handler = routeBySubpath("auth", {
      "/ready": loadedOnFirstRequest(() => {
        loads++;
        return Promise.resolve({ handler: () => Promise.resolve(new Response("from the route")) });
      }),
    });
    const answers = await Promise.all([handler(post("/ready")), handler(post("/ready"))]);
    expect(await Promise.all(answers.map((answer) => answer.text()))).toEqual(["from the route", "from the route"]);
    expect(loads).toBe(1);
  });

  it("answers a route that fails to load with a 500 in the auth envelope, logs why, and imports again on the next request", async () => {
    // The log lines are read here, not printed among the run's results.
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    vi.spyOn(console, "log").mockImplementation(() => {});
    let loads = 0;
    const handler = routeBySubpath("auth", {
      "/broken": loadedOnFirstRequest(() => {
        loads++;
        return Promise.reject(new Error("module not found: ../auth-broken/handler.ts"));
      }),
    });
    for (const attempt of [1, 2]) {
      const answer = await handler(post("/broken"));
      expect(answer.status).toBe(500);
      expect(answer.headers.get("access-control-allow-origin")).toBe("*");
      const body = await answer.json();
      expect(body).toEqual({ statusCode: 500, code: "internal_error", message: "Internal server error" });
      expect(JSON.stringify(body)).not.toContain("auth-broken");
      expect(loads).toBe(attempt);
      expect(errors).toHaveBeenCalledTimes(attempt);
      expect(JSON.parse(String(errors.mock.lastCall?.[0]))).toEqual({
        level: "error",
        function: "auth",
        error: "Error: module not found: ../auth-broken/handler.ts",
      });
    }
  });
});
