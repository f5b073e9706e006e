/**
 * What every auth endpoint does before its own work, on both of its paths:
 * the `apikey` gate, methods, CORS and the reading of the JSON body.
 */
import { describe, expect, it } from "vitest";
import { inject } from "vitest";
import { limits } from "../supabase/functions/_shared/contract/mod.ts";
import { anonKey, call, uniqueEmail } from "./support/api.ts";
import { authActions, expectAuthError, pathsOf, validBodyFor } from "./support/auth.ts";

const everyAuthPath = authActions.flatMap((action) => pathsOf(action).map((path) => ({ action, path })));

describe.each(everyAuthPath)("$path", ({ action, path }) => {
  const body = () => validBodyFor(action, uniqueEmail("http"));

  it("answers 401 without an apikey header", async () => {
    const error = expectAuthError(await call(path, { body: body(), apiKey: null }), 401);
    expect(error.message).toMatch(/apikey/i);
  });

  it("answers 401 with a wrong apikey, including the right key in another case or with a suffix", async () => {
    for (const apiKey of ["wrong-key", anonKey.toUpperCase(), `${anonKey}x`, `Bearer ${anonKey}`]) {
      const error = expectAuthError(await call(path, { body: body(), apiKey }), 401);
      expect(error.message).toMatch(/apikey/i);
    }
  });

  it("answers 405 with Allow: POST to other methods", async () => {
    for (const method of ["GET", "PUT", "PATCH", "DELETE"]) {
      const response = await call(path, { method });
      expectAuthError(response, 405);
      expect(response.headers.get("allow")).toBe("POST");
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
    }
  });

  it("answers a CORS preflight without an apikey", async () => {
    const response = await call(path, {
      method: "OPTIONS",
      apiKey: null,
      headers: {
        Origin: "https://app.example.com",
        "Access-Control-Request-Method": "POST",
        // x-region pins the function to the database's region (supabase-js `functions.invoke({ region })`).
        "Access-Control-Request-Headers": "apikey, content-type, authorization, x-client-info, x-region",
      },
    });
    expect(response.status).toBe(204);
    expect(response.text).toBe("");
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("access-control-allow-methods")?.split(/,\s*/)).toEqual(["POST", "OPTIONS"]);
    const allowedHeaders = response.headers.get("access-control-allow-headers")?.toLowerCase().split(/,\s*/);
    expect(allowedHeaders).toEqual(
      expect.arrayContaining(["apikey", "content-type", "authorization", "x-client-info", "x-region"]),
    );
  });

  it("lets browsers read its errors: CORS headers on a 401", async () => {
    const response = await call(path, { body: body(), apiKey: null, headers: { Origin: "https://app.example.com" } });
    expect(response.status).toBe(401);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("answers 400 to malformed JSON", async () => {
    for (const text of ["{", '{"email": }', "", "undefined", "{'email': 'a@example.com'}"]) {
      const error = expectAuthError(
        await call(path, { body: text, headers: { "Content-Type": "application/json" } }),
        400,
      );
      expect(error.message).toBe("Request body must be valid JSON");
    }
  });

  it("answers 400 to JSON that is not an object", async () => {
    for (const text of ["[]", '["email"]', "null", "42", '"a@example.com"', "true"]) {
      const error = expectAuthError(await call(path, { body: text }), 400);
      expect(error.message).toBe("Request body must be a JSON object");
    }
  });

  // The first field of the action's body, which the 400 for an empty object names.
  const firstField = action === "register" ? "name" : "email";

  it("answers 400 naming the first missing field when the body is an empty object", async () => {
    const error = expectAuthError(await call(path, { body: {} }), 400);
    expect(error.message).toBe(`${firstField} is required`);
  });

  it("answers 415 to a body that is not declared as JSON", async () => {
    for (const contentType of ["text/plain", "application/x-www-form-urlencoded", "application/jsonp"]) {
      const response = await call(path, { body: JSON.stringify(body()), headers: { "Content-Type": contentType } });
      expect(expectAuthError(response, 415).message).toMatch(/application\/json/);
    }
  });

  it("accepts application/json with a charset parameter", async () => {
    const response = await call(path, {
      body: { ...body(), email: 17 },
      headers: { "Content-Type": "application/json; charset=utf-8" },
    });
    // Past the content-type check and into validation, which names the field.
    expect(expectAuthError(response, 400).message).toBe("email must be a string");
  });
});

describe("request bodies without a Content-Length", () => {
  it("still answers 413 once a streamed body passes 1 MiB", async () => {
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > limits.bodyMaxBytes + chunk.length) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const response = await fetch(
      `${inject("baseUrl")}/auth/login`,
      {
        method: "POST",
        headers: { apikey: anonKey, "Content-Type": "application/json" },
        body: stream,
        duplex: "half",
      } as RequestInit & { duplex: "half" },
    );
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      statusCode: 413,
      message: `Request body must be at most ${limits.bodyMaxBytes} bytes`,
      code: "payload_too_large",
    });
  });

  it("accepts a streamed body under the limit", async () => {
    const body = new TextEncoder().encode(JSON.stringify({ email: uniqueEmail("stream"), password: "whatever-pw" }));
    const response = await fetch(
      `${inject("baseUrl")}/auth/login`,
      {
        method: "POST",
        headers: { apikey: anonKey, "Content-Type": "application/json" },
        body: new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(body);
            controller.close();
          },
        }),
        duplex: "half",
      } as RequestInit & { duplex: "half" },
    );
    // An unknown user: the body was read and checked against the database.
    expect(response.status).toBe(401);
  });
});

describe("the auth router", () => {
  it("answers 404 in the auth envelope for an action it does not have", async () => {
    for (const path of ["/auth/signout", "/auth", "/auth/login/extra"]) {
      const response = await call(path, { body: {} });
      const error = expectAuthError(response, 404);
      expect(error.message).toMatch(/no such endpoint/i);
      // The same headers as every other answer.
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(response.headers.get("x-request-id")).toMatch(/^[A-Za-z0-9._-]{8,100}$/);
    }
  });

  it("tolerates a trailing slash", async () => {
    const response = await call("/auth/login/", { body: { email: uniqueEmail("slash"), password: "whatever-pw" } });
    expectAuthError(response, 401);
  });
});

describe("the request log", () => {
  it("returns a request id and echoes a well-formed one given by the caller", async () => {
    const given = await call("/auth/login", { body: {}, headers: { "x-request-id": "req-0123456789" } });
    expect(given.headers.get("x-request-id")).toBe("req-0123456789");
    const fresh = await call("/auth/login", { body: {}, headers: { "x-request-id": "bad id with spaces" } });
    expect(fresh.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});
