import { describe, expect, it } from "vitest";
import { z } from "zod";
import { limits, listNotesQuery, registerBody } from "../../supabase/functions/_shared/contract/mod.ts";
import { BadRequestError, HttpError } from "../../supabase/functions/_shared/http/errors.ts";
import {
  readJsonBody,
  readQuery,
  refuseUnknownParameters,
  validate,
} from "../../supabase/functions/_shared/http/request.ts";

const anyObject = z.object({}).passthrough();

function post(body: BodyInit | null, headers: Record<string, string> = { "Content-Type": "application/json" }) {
  return new Request("http://localhost/auth/login", { method: "POST", body, headers, duplex: "half" } as RequestInit);
}

/** A body of 1.25 MiB of spaces, in five chunks, with no length of its own. */
function overOneMiB(): ReadableStream<Uint8Array> {
  const chunk = new Uint8Array(256 * 1024).fill(0x20);
  let chunks = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (chunks++ === 5) return controller.close();
      controller.enqueue(chunk);
    },
  });
}

async function failure(promise: Promise<unknown>): Promise<HttpError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  if (!(error instanceof HttpError)) throw new Error(`expected an HttpError, got ${String(error)}`);
  return error;
}

describe("readJsonBody", () => {
  it("returns the body parsed and validated by the schema", async () => {
    const body = await readJsonBody(
      post(JSON.stringify({ name: " Ada ", email: " Ada@Example.COM ", password: "long enough" })),
      registerBody,
    );
    expect(body).toEqual({ name: "Ada", email: "ada@example.com", password: "long enough" });
  });

  it("requires Content-Type application/json, with or without parameters, in any case", async () => {
    for (
      const contentType of ["application/json; charset=utf-8", "Application/JSON", "application/json ;charset=UTF-8"]
    ) {
      await expect(readJsonBody(post("{}", { "Content-Type": contentType }), anyObject)).resolves.toEqual({});
    }
    const refused: Record<string, string>[] = [{}, { "Content-Type": "text/plain" }, {
      "Content-Type": "application/jsonx",
    }];
    for (const headers of refused) {
      const error = await failure(readJsonBody(post("{}", headers), anyObject));
      expect(error.status).toBe(415);
      expect(error.message).toBe("Content-Type must be application/json");
    }
  });

  it("refuses a declared Content-Length over 1 MiB, reading the rest first only while it may still be arriving", async () => {
    const declared = (bytes: number, more: Record<string, string> = {}) =>
      post("{}", { "Content-Type": "application/json", "Content-Length": String(bytes), ...more });
    // Up to 4 MiB the rest is read, so the client gets the 413 rather than a connection reset.
    const read = declared(limits.bodyMaxBytes + 1);
    expect((await failure(readJsonBody(read, anyObject))).status).toBe(413);
    expect(read.bodyUsed).toBe(true);
    // Past that, or when the client waits for 100 Continue before sending, nothing is read.
    for (
      const unread of [declared(4 * 1024 * 1024 + 1), declared(limits.bodyMaxBytes + 1, { Expect: "100-continue" })]
    ) {
      expect((await failure(readJsonBody(unread, anyObject))).status).toBe(413);
      expect(unread.bodyUsed).toBe(false);
    }
  });

  it("still refuses with 413 a declared body whose rest never comes, once the body's time is up", async () => {
    const never = new ReadableStream<Uint8Array>({ pull: () => new Promise(() => {}) });
    const request = post(never, { "Content-Type": "application/json", "Content-Length": String(2 * 1024 * 1024) });
    expect((await failure(readJsonBody(request, anyObject, 100))).status).toBe(413);
  });

  it("counts the bytes of a chunked body that also declares a small Content-Length", async () => {
    const headers = { "Content-Type": "application/json", "Content-Length": "10", "Transfer-Encoding": "chunked" };
    expect((await failure(readJsonBody(post(overOneMiB(), headers), anyObject))).status).toBe(413);
  });

  it("counts the bytes that arrive when no length is declared", async () => {
    const error = await failure(readJsonBody(post(overOneMiB()), anyObject));
    expect(error.status).toBe(413);
    expect(error.message).toBe(`Request body must be at most ${limits.bodyMaxBytes} bytes`);
  });

  it("accepts exactly 1 MiB", async () => {
    const json = JSON.stringify({ pad: "" });
    const padded = json.replace('""', `"${"x".repeat(limits.bodyMaxBytes - json.length)}"`);
    expect(new TextEncoder().encode(padded).length).toBe(limits.bodyMaxBytes);
    const body = await readJsonBody(post(padded), z.object({ pad: z.string() }));
    expect(body.pad.length).toBe(limits.bodyMaxBytes - json.length);
  });

  it("answers 400 to bytes that are not UTF-8", async () => {
    const error = await failure(readJsonBody(post(new Uint8Array([0x7b, 0xff, 0x7d])), anyObject));
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.message).toBe("Request body must be UTF-8 encoded JSON");
  });

  it("answers 400 to malformed JSON and to JSON that is not an object", async () => {
    for (const text of ["", "{", "{a:1}"]) {
      expect((await failure(readJsonBody(post(text), anyObject))).message).toBe("Request body must be valid JSON");
    }
    for (const text of ["[]", "null", "1", '"x"']) {
      expect((await failure(readJsonBody(post(text), anyObject))).message).toBe("Request body must be a JSON object");
    }
  });

  it("answers 400 naming the first invalid field", async () => {
    const error = await failure(
      readJsonBody(post(JSON.stringify({ name: "Ada", email: "ada@example.com" })), registerBody),
    );
    expect(error.status).toBe(400);
    expect(error.message).toBe("password is required");
  });
});

describe("readQuery", () => {
  const query = (search: string) => new Request(`http://localhost/notes-fetch${search}`);

  it("applies defaults and converts numbers", () => {
    expect(readQuery(query(""), listNotesQuery)).toEqual({ limit: 10, offset: 0, order: "createdAt" });
    expect(readQuery(query("?limit=100&offset=7"), listNotesQuery)).toEqual({
      limit: 100,
      offset: 7,
      order: "createdAt",
    });
  });

  it("refuses a parameter given twice", () => {
    expect(() => readQuery(query("?limit=5&limit=6"), listNotesQuery)).toThrow("limit must be given once");
  });
});

describe("refuseUnknownParameters", () => {
  const request = (search: string) => new Request(`http://localhost/notes-get${search}`);
  const refused = (search: string, query?: z.ZodObject) => {
    try {
      refuseUnknownParameters(request(search), query);
    } catch (error) {
      expect(error).toBeInstanceOf(BadRequestError);
      return (error as BadRequestError).details?.fields?.map((problem) => problem.field);
    }
    return [];
  };

  it("names each parameter the query does not, once, and lets the platform's own through", () => {
    const query = z.object({ id: z.string() });
    expect(refused("?id=1&forceFunctionRegion=eu-central-1", query)).toEqual([]);
    expect(refused("?id=1&__proto__=1&constructor=2&__proto__=3", query)).toEqual(["__proto__", "constructor"]);
  });

  it("refuses every parameter without a query, and none for a query that takes any", () => {
    expect(refused("?id=1&forceFunctionRegion=eu-central-1")).toEqual(["id"]);
    expect(refused("?anything=1", anyObject)).toEqual([]);
  });
});

describe("validate", () => {
  it("puts the field in front of zod's own messages", () => {
    expect(() => validate(z.object({ count: z.number() }), { count: "x" })).toThrow(/^count: /);
  });

  it("keeps the contract's messages, which already start with the field", () => {
    const thrown = (() => {
      try {
        validate(registerBody, { name: 1 });
      } catch (error) {
        return error;
      }
    })();
    expect(thrown).toBeInstanceOf(BadRequestError);
    expect(thrown).toMatchObject({
      message: "name must be a string",
      details: {
        fields: [
          { field: "name", message: "name must be a string" },
          { field: "email", message: "email is required" },
          { field: "password", message: "password is required" },
        ],
      },
    });
  });
});

describe("JSON nesting", () => {
  it("accepts 32 levels and refuses 33, counting brackets inside strings as text", async () => {
    const nested = (depth: number) => `{"a":${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}}`;
    await expect(readJsonBody(post(nested(32)), anyObject)).resolves.toEqual(expect.any(Object));
    const error = await failure(readJsonBody(post(nested(33)), anyObject));
    expect(error.status).toBe(400);
    expect(error.message).toBe("Request body must not nest more than 32 levels deep");
    const brackets = JSON.stringify({ a: "[[[[{{{{".repeat(10), b: '\\"[' });
    await expect(readJsonBody(post(brackets), anyObject)).resolves.toEqual(JSON.parse(brackets));
  });
});
