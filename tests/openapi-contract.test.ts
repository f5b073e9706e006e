/**
 * openapi.json is current, valid, served by the stack, and true: every
 * documented operation is called on the running stack, and every answer's
 * status and body are checked against the document.
 */
import { readFileSync } from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, describe, expect, inject, it } from "vitest";
import { buildOpenApiDocument } from "../scripts/openapi/document.ts";
import { type ApiRequest, call, readResetCode, uniqueEmail } from "./support/api.ts";
import { expectDocumented, matchesRef, observed, openApiDocument } from "./support/openapi.ts";

const committedText = readFileSync(new URL("../openapi.json", import.meta.url), "utf8");
const origin = new URL(inject("baseUrl")).origin;

/**
 * Calls `path` and checks the answer against the document. A single-purpose
 * auth function (`/auth-login`) is documented once, at the interface's path
 * (`/auth/login`) it answers identically to.
 */
async function documentedCall(method: string, path: string, request: ApiRequest = {}) {
  const query = path.indexOf("?");
  const documentedPath = (query === -1 ? path : path.slice(0, query)).replace(/^\/auth-/, "/auth/");
  const response = await call(path, { ...request, method });
  expectDocumented(method, documentedPath, response);
  return response;
}

describe("openapi.json", () => {
  it("is what `npm run openapi` generates from the contract", () => {
    expect(committedText).toBe(`${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
  });

  it("is a valid OpenAPI 3.1 document", async () => {
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(committedText));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("has examples that match their own schemas", () => {
    let checked = 0;
    for (const [path, methods] of Object.entries(openApiDocument.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const media = [
          ...Object.values(operation.requestBody?.content ?? {}),
          ...Object.values(operation.responses).flatMap((response) => Object.values(response.content ?? {})),
        ];
        for (const { schema, example } of media) {
          expect(example, `${method} ${path} has an example for ${schema.$ref}`).toBeDefined();
          const { valid, errors } = matchesRef(schema.$ref, example);
          expect(valid, `${method} ${path} example against ${schema.$ref}: ${errors}`).toBe(true);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(80);
  });

  it("is served by the stack at /openapi.json, naming the stack relative to the document as its first server", async () => {
    const response = await fetch(`${origin}/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    const served = await response.json();
    expect(served).toEqual(buildOpenApiDocument("/functions/v1"));
    expect(served.servers[0].url).toBe("/functions/v1");
    expect(new URL(served.servers[0].url, response.url).href).toBe(`${origin}/functions/v1`);
    expect(served.paths).toEqual(openApiDocument.paths);
  });

  it("serves the same document whatever Host a client claims, echoing none of them", async () => {
    const { request } = await import("node:http");
    const url = new URL(`${origin}/openapi.json`);
    const fetchAs = (host: string) =>
      new Promise<string>((resolve, reject) => {
        request({ hostname: url.hostname, port: url.port, path: url.pathname, headers: { host } }, (res) => {
          let body = "";
          res.setEncoding("utf8").on("data", (chunk) => (body += chunk)).on("end", () => resolve(body));
        }).on("error", reject).end();
      });
    const reference = await fetchAs(url.host);
    for (let index = 0; index < 20; index++) {
      const host = `attacker-${index}.example:${1000 + index}`;
      const body = await fetchAs(host);
      expect(body).toBe(reference);
      expect(body).not.toContain("attacker");
    }
  });

  it("has an interactive reference at /docs whose assets come from the stack itself", async () => {
    const page = await fetch(`${origin}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('url: "/openapi.json"');
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
    expect(sources).toEqual(["/docs/swagger-ui.css", "/docs/swagger-ui-bundle.js"]);
    for (const source of sources) {
      const asset = await fetch(`${origin}${source}`);
      expect(asset.status).toBe(200);
      expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
    }
  });
});

describe("the running stack answers as openapi.json says", () => {
  const password = "correct horse battery";

  afterAll(() => {
    // Every documented operation was called and answered its documented success at least once.
    for (const [path, methods] of Object.entries(openApiDocument.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const success = Number(Object.keys(operation.responses).find((status) => status.startsWith("2")));
        expect(observed.get(`${method.toUpperCase()} ${path}`), `${method} ${path}`).toContain(success);
      }
    }
  });

  it("account operations, on both the interface's paths and the function names", async () => {
    const email = uniqueEmail("openapi");
    await documentedCall("POST", "/auth/register", { body: { name: "Ada", email, password } });
    await documentedCall("POST", "/auth-register", { body: { name: "Bea", email: uniqueEmail("openapi"), password } });
    await documentedCall("POST", "/auth/register", { body: { name: "Ada", email, password } }); // 409
    await documentedCall("POST", "/auth-register", { body: { name: "Ada", email: uniqueEmail(), password: "short" } });
    await documentedCall("POST", "/auth/register", { body: { name: "Ada", email }, apiKey: null }); // 401
    await documentedCall("POST", "/auth/register", { body: "name=Ada", headers: { "Content-Type": "text/plain" } });
    await documentedCall("GET", "/auth/login"); // 405

    await documentedCall("POST", "/auth/login", { body: { email, password } });
    await documentedCall("POST", "/auth-login", { body: { email, password } });
    await documentedCall("POST", "/auth/login", { body: { email, password: "wrong password" } }); // 401

    await documentedCall("POST", "/auth/request-password-reset", { body: { email } });
    const first = await readResetCode(email);
    await documentedCall("POST", "/auth/create-password", {
      body: { email, password: "a new secret", code: "000000" },
    });
    const set = await documentedCall("POST", "/auth/create-password", {
      body: { email, password: "a new secret", code: first },
    });
    expect(set.status).toBe(200);
    await documentedCall("POST", "/auth/create-password", {
      body: { email: uniqueEmail("nobody"), password: "a new secret", code: "123456" },
    }); // 404

    await documentedCall("POST", "/auth-request-password-reset", { body: { email } });
    const second = await readResetCode(email, 1);
    const again = await documentedCall("POST", "/auth-create-password", {
      body: { email, password: "another secret", code: second },
    });
    expect(again.status).toBe(200);
  });

  it("notes operations, including their errors", async () => {
    const owner = await documentedCall("POST", "/auth/register", {
      body: { name: "Owner", email: uniqueEmail("owner"), password },
    });
    const other = await documentedCall("POST", "/auth/register", {
      body: { name: "Other", email: uniqueEmail("other"), password },
    });
    const token: string = owner.body.data.accessToken;
    const otherToken: string = other.body.data.accessToken;

    const created = await documentedCall("POST", "/notes-create", { token, body: { title: "First", content: "x" } });
    expect(created.status).toBe(201);
    const id: string = created.body.data.id;
    await documentedCall("POST", "/notes-create", { token, body: {} }); // 400
    await documentedCall("POST", "/notes-create", { body: { title: "no token" } }); // 401
    await documentedCall("POST", "/notes-create", { token, body: { content: "x".repeat(1_100_000) } }); // 413
    await documentedCall("POST", "/notes-create", { token, body: "{}", headers: { "Content-Type": "text/plain" } });

    await documentedCall("GET", "/notes-fetch?limit=5&offset=0", { token });
    await documentedCall("GET", "/notes-fetch?limit=0", { token }); // 400
    await documentedCall("GET", "/notes-fetch", { token: "Bearer not-a-jwt" }); // 401
    await documentedCall("PUT", "/notes-fetch", { token }); // 405

    await documentedCall("POST", "/notes-save", { token, body: { id, status: "PUBLISHED" } });
    await documentedCall("POST", "/notes-save", { token, body: { id } }); // 400
    await documentedCall("POST", "/notes-save", { token: otherToken, body: { id, title: "mine now" } }); // 404

    await documentedCall("DELETE", "/notes-delete", { token }); // 400
    await documentedCall("DELETE", `/notes-delete?id=${id}`, { token: otherToken }); // 404
    const deleted = await documentedCall("DELETE", `/notes-delete?id=${id}`, { token });
    expect(deleted.body.data).toEqual({ id });
  });
});
