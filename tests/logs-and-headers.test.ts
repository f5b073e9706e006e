/**
 * Logs and headers across every endpoint, on the shared stack: one JSON line
 * per request, and no secret in any log line or response. Two kinds of line in
 * the captured log carry a secret on purpose and are left out of the search,
 * exactly those: the local stack's mail printer (`[mail] ...` lines print the
 * reset code, as DESIGN.md has the local stack deliver mail) and its start-up
 * banner's `apikey:` line (the development key it prints for the developer).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { anonKey, type ApiResponse, call, readResetCode, registerUser, stackLog } from "./support/api.ts";
import { expectSession, jwtOf } from "./support/auth.ts";
import { noteEnvelope } from "./support/notes.ts";

interface Exchange {
  path: string;
  method: string;
  response: ApiResponse;
}

const password = "log-probe-password-one";
const wrongPassword = "log-probe-password-wrong";
const newPassword = "log-probe-password-two";
const foreignApiKey = "log-probe-foreign-apikey";

const exchanges: Exchange[] = [];
const secrets: Record<string, string> = {};

async function send(path: string, request: Parameters<typeof call>[1] = {}) {
  const method = request.method ?? (request.body === undefined ? "GET" : "POST");
  const response = await call(path, request);
  exchanges.push({ path, method, response });
  return response;
}

/** Log lines that are not the two deliberate exceptions named above. */
function searchableLog(): string {
  return stackLog()
    .split("\n")
    .filter((line) => !line.startsWith("[mail] ") && !/^\s*apikey:/.test(line))
    .join("\n");
}

/** The request log lines, by request id. */
function requestLines(): Map<string, Record<string, unknown>> {
  const lines = new Map<string, Record<string, unknown>>();
  for (const line of stackLog().split("\n")) {
    if (!line.startsWith("{")) continue;
    const parsed = JSON.parse(line);
    if (typeof parsed.requestId === "string") lines.set(parsed.requestId, parsed);
  }
  return lines;
}

beforeAll(async () => {
  const user = await registerUser("log-probe");
  secrets.registerPassword = user.password;
  secrets.registerToken = jwtOf(user.accessToken);
  const email = user.email;
  await send("/auth/register", { body: { name: "Log Probe", email: `x-${email}`, password } });
  const login = await send("/auth/login", { body: { email: `x-${email}`, password } });
  secrets.password = password;
  secrets.loginToken = jwtOf(expectSession(login, 200).accessToken);
  await send("/auth/login", { body: { email: `x-${email}`, password: wrongPassword } });
  secrets.wrongPassword = wrongPassword;
  await send("/auth/request-password-reset", { body: { email: `x-${email}` } });
  const code = await readResetCode(`x-${email}`);
  await send("/auth/create-password", { body: { email: `x-${email}`, password: newPassword, code } });
  secrets.newPassword = newPassword;
  secrets.code = code;
  await send("/auth-login", { body: { email: `x-${email}`, password: newPassword }, apiKey: foreignApiKey });
  secrets.foreignApiKey = foreignApiKey;
  secrets.apiKey = anonKey;

  const token = user.accessToken;
  const created = await send("/notes-create", { token, body: { title: "log probe" } });
  const id = noteEnvelope.parse(created.body).data.id;
  await send("/notes-fetch?limit=5", { token });
  await send("/notes-save", { token, body: { id, content: "log probe content" } });
  await send(`/notes-delete?id=${id}`, { token, method: "DELETE" });
  await send("/notes-fetch", { token: `${token}tampered` });
  await send("/notes-create", { method: "PUT", token, body: { title: "wrong method" } });

  // stdout reaches the log file asynchronously: wait until every request's line is there.
  const deadline = Date.now() + 10_000;
  while (exchanges.some(({ response }) => !requestLines().has(response.headers.get("x-request-id") ?? ""))) {
    if (Date.now() > deadline) throw new Error("request lines missing from the stack log");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});

describe("request logs", () => {
  it("writes one JSON line per request: request id, function, method, status and duration", () => {
    const lines = requestLines();
    const log = stackLog();
    for (const { path, method, response } of exchanges) {
      const requestId = response.headers.get("x-request-id") ?? "";
      expect(requestId).not.toBe("");
      expect(log.split(requestId).length - 1, `lines for ${requestId}`).toBe(1);
      const line = lines.get(requestId);
      expect(line).toMatchObject({
        requestId,
        function: path.slice(1).split("?")[0].replace("/", "-"),
        method,
        status: response.status,
      });
      expect(typeof line?.durationMs).toBe("number");
    }
  });

  it("never contains a password, code, token, hash or apikey", () => {
    const log = searchableLog();
    for (const [name, secret] of Object.entries(secrets)) {
      // Each secret as a whole token: a reset code's six digits can turn up by chance inside one of the
      // thousands of hex request ids in a full run's log, which is no leak (CI's pooler pass met one).
      const literal = secret.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      const whole = new RegExp(`(?<![0-9A-Za-z])${literal}(?![0-9A-Za-z])`);
      expect(whole.test(log), `${name} in the log`).toBe(false);
    }
    expect(log).not.toMatch(/\$2[aby]\$\d\d\$/);
    // Any JWT at all, not just the ones this suite knows.
    expect(log).not.toMatch(/eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\./);
  });
});

describe("responses", () => {
  it("carry no password, code, hash or apikey, and a token only as a session's accessToken", () => {
    for (const { path, response } of exchanges) {
      const withoutOwnToken = response.text.replace(/"accessToken":"Bearer [^"]+"/, "");
      for (const [name, secret] of Object.entries(secrets)) {
        expect(withoutOwnToken.includes(secret), `${name} in the answer of ${path}`).toBe(false);
      }
      expect(withoutOwnToken).not.toMatch(/\$2[aby]\$\d\d\$/);
      expect(withoutOwnToken).not.toMatch(/eyJ[A-Za-z0-9_-]+\.eyJ/);
    }
  });

  it("carry nosniff and an x-request-id everywhere, and no-store on every auth answer", () => {
    for (const { path, response } of exchanges) {
      expect(response.headers.get("x-content-type-options"), path).toBe("nosniff");
      expect(response.headers.get("x-request-id"), path).toMatch(/^[A-Za-z0-9._-]{8,100}$/);
      if (path.startsWith("/auth")) expect(response.headers.get("cache-control"), path).toBe("no-store");
    }
    const statuses = new Set(exchanges.map(({ response }) => response.status));
    // Successes and failures of both envelopes were looked at.
    for (const status of [200, 201, 401, 405]) expect(statuses).toContain(status);
  });

  it("let a browser on any origin read every answer and its id, and leave the preflight's lists to the preflight", () => {
    for (const { path, response } of exchanges) {
      expect(response.headers.get("access-control-allow-origin"), path).toBe("*");
      expect(response.headers.get("access-control-expose-headers")?.split(/,\s*/), path).toEqual(
        ["x-request-id", "retry-after", "www-authenticate"],
      );
      // Browsers read the allowed methods and request headers from the preflight's answer only.
      expect(response.headers.get("access-control-allow-methods"), path).toBeNull();
      expect(response.headers.get("access-control-allow-headers"), path).toBeNull();
    }
  });
});
