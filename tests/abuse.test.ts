/**
 * Hostile clients that try to exhaust the service rather than break into it:
 * bodies that trickle in or never finish, clients that hang up half-way,
 * tokens dated in the future, and hashing kept out of the database. On a
 * stack of its own with a one-second body deadline.
 */
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authErrorEnvelope, notesErrorEnvelope } from "../supabase/functions/_shared/contract/mod.ts";
import { anonKey, registerUser } from "./support/api.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";
import { claimsOf, signToken } from "./support/tokens.ts";

let stack: ScratchStack;

beforeAll(async () => {
  stack = await startScratchStack("abuse", { env: { BODY_TIMEOUT_MS: "1000" } });
});

afterAll(async () => {
  await stack?.stop();
});

/** Opens a raw connection to the stack and sends a request's headers announcing `length` body bytes. */
function startRequest(path: string, length: number): Promise<{ socket: Socket; answer: Promise<string> }> {
  const url = new URL(stack.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(
        `POST ${url.pathname}${path} HTTP/1.1\r\nHost: ${url.host}\r\napikey: ${anonKey}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`,
      );
      // The first part of the answer: the stack need not close the connection after it.
      const answer = new Promise<string>((done) => {
        socket.setEncoding("utf8").once("data", (chunk) => done(String(chunk)));
        socket.once("close", () => done(""));
        socket.once("error", () => done(""));
      });
      resolve({ socket, answer });
    }).on("error", reject);
  });
}

function stackRss(): number {
  const status = readFileSync(`/proc/${stack.pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

describe("request bodies", () => {
  it("answers 408 in the endpoint's envelope when the body has not arrived within the deadline", async () => {
    const { socket, answer } = await startRequest("/auth/login", 1_000);
    socket.write('{"email":');
    const started = performance.now();
    const first = await answer;
    const waitedMs = performance.now() - started;
    // The server ends the connection after its 408: the rest of the body is not waited for.
    const closed = await new Promise((resolve) => {
      socket.once("close", () => resolve(true));
      setTimeout(() => resolve(false), 2_000);
    });
    socket.destroy();
    expect(closed).toBe(true);
    expect(first).toMatch(/^HTTP\/1\.1 408 /);
    const body = JSON.parse(first.slice(first.indexOf("\r\n\r\n") + 4));
    expect(authErrorEnvelope.strict().parse(body)).toMatchObject({ statusCode: 408 });
    // The deadline is one second here; well under the ten seconds of the default.
    expect(waitedMs).toBeLessThan(5_000);
  });

  it("holds memory in proportion to the bytes received while 200 clients trickle bodies in", async () => {
    const before = stackRss();
    const clients = await Promise.all(Array.from({ length: 200 }, () => startRequest("/auth/login", 1_000_000)));
    // One byte per client every 50 ms, until the deadline cuts each off.
    const trickle = setInterval(() => {
      for (const { socket } of clients) if (!socket.destroyed) socket.write(" ");
    }, 50);
    await new Promise((resolve) => setTimeout(resolve, 900));
    const during = stackRss();
    clearInterval(trickle);
    const answers = await Promise.all(clients.map(({ answer }) => answer));
    for (const { socket } of clients) socket.destroy();
    // Every client was answered 408 once its second was up.
    expect(answers.filter((text) => /^HTTP\/1\.1 408 /.test(text))).toHaveLength(200);
    expect(during - before).toBeLessThan(150 * 1024 * 1024);
  });

  it("logs a client that hangs up half-way at info level, as a client abort and not a 500", async () => {
    const { socket, answer } = await startRequest("/auth/login", 1_000);
    socket.write('{"email":"ada@example.com",');
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.destroy();
    await answer;
    await new Promise((resolve) => setTimeout(resolve, 300));
    const log = readFileSync(stack.logFile, "utf8");
    expect(log).toMatch(/"function":"auth-login","method":"POST","status":499/);
    expect(log).not.toMatch(/"level":"error"/);
  });
});

describe("deeply nested JSON", () => {
  it("answers a 1 MB body nested 500,000 deep 400 in the endpoint's envelope in under 300 ms", async () => {
    const body = "[".repeat(500_000) + "]".repeat(500_000);
    const user = await registerUser("nested", { baseUrl: stack.baseUrl });
    const cases = [
      { path: "/auth/login", token: undefined, envelope: authErrorEnvelope },
      { path: "/notes-create", token: user.accessToken, envelope: notesErrorEnvelope },
    ];
    for (const { path, token, envelope } of cases) {
      const started = performance.now();
      const response = await stack.call(path, { body, token });
      const tookMs = performance.now() - started;
      expect(response.status, response.text).toBe(400);
      expect(response.text).toMatch(/nest more than 32 levels/);
      envelope.strict().parse(response.body);
      expect(tookMs).toBeLessThan(300);
    }
  });
});

describe("access tokens", () => {
  it("refuses a token issued more than a minute in the future", async () => {
    const user = await registerUser("future", { baseUrl: stack.baseUrl });
    const now = Math.floor(Date.now() / 1000);
    const future = await signToken({ ...claimsOf(user), iat: now + 3_600, exp: now + 7_200 });
    const response = await stack.call("/notes-fetch", { token: future });
    expect(response.status).toBe(401);
    expect(notesErrorEnvelope.strict().parse(response.body).success).toBe(false);
    // Within the allowed clock skew the same token is fine.
    const skewed = await signToken({ ...claimsOf(user), iat: now + 30 });
    expect((await stack.call("/notes-fetch", { token: skewed })).status).toBe(200);
  });
});

describe("request-password-reset", () => {
  it("leaves hashing to the functions: no function in the database calls crypt( or gen_salt(", async () => {
    const hashing = await stack.sql<{ name: string }[]>`
      select n.nspname || '.' || p.proname as name
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname in ('app', 'public', 'auth') and p.prosrc ~ ${String.raw`(crypt|gen_salt)\s*\(`}`;
    expect(hashing.map((row) => row.name)).toEqual([]);
  });
});
