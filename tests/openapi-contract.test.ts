/**
 * openapi.json is current, valid, and served by the stack with its reference
 * page. That the service answers what it documents, status by status, is
 * tests/openapi-statuses.test.ts.
 */
import { readFileSync } from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, inject, it } from "vitest";
import { buildOpenApiDocument } from "../scripts/openapi/document.ts";
import { matchesRef, openApiDocument } from "./support/openapi.ts";

const committedText = readFileSync(new URL("../openapi.json", import.meta.url), "utf8");
const origin = new URL(inject("baseUrl")).origin;

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

  it("documents each browser navigation's 302 as a redirect: a required Location with an absolute URL, no body, no credentials", () => {
    const redirects = Object.entries(openApiDocument.paths).flatMap(([path, methods]) =>
      Object.entries(methods).flatMap(([method, operation]) =>
        operation.responses["302"] ? [{ path, method, operation }] : []
      )
    );
    expect(redirects.map(({ method, path }) => `${method.toUpperCase()} ${path}`).sort()).toEqual([
      "GET /auth/identities/link/authorize",
      "GET /auth/oauth/authorize",
      "GET /auth/oauth/callback/{provider}",
    ]);
    for (const { path, operation } of redirects) {
      const redirect = operation.responses["302"] as {
        content?: unknown;
        headers: Record<string, { required?: boolean; example?: string }>;
      };
      expect(redirect.content, path).toBeUndefined();
      expect(redirect.headers.Location.required, path).toBe(true);
      expect(() => new URL(redirect.headers.Location.example ?? ""), path).not.toThrow();
      expect((operation as { security?: unknown }).security, path).toEqual([]);
    }
  });

  it("has an event-stream example whose events are the documented ones, their data matching its schemas", () => {
    const media: unknown = openApiDocument.paths["/notes-stream"].get.responses["200"].content?.["text/event-stream"];
    const { example, "x-events": events } = media as {
      example: string;
      "x-events": Record<string, { $ref: string }>;
    };
    const blocks = example.split("\n\n").filter((block) => block.startsWith("event: "));
    expect(blocks.map((block) => block.split("\n")[0])).toEqual(["event: change", "event: change", "event: ready"]);
    for (const block of blocks) {
      const fields = Object.fromEntries(block.split("\n").map((line) => line.split(/: (.*)/s, 2)));
      const { valid, errors } = matchesRef(events[fields.event].$ref, JSON.parse(fields.data));
      expect(valid, `${fields.event}: ${errors}`).toBe(true);
      expect(fields.id).toBeTruthy();
    }
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
