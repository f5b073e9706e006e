/**
 * Sessions as an app lives with them: refresh tokens that rotate, concurrent
 * refreshes that converge, reuse that ends the session, sign-out on the
 * server, the sessions list, and the idle and absolute timeouts. Each suite
 * runs on a stack of its own whose database it can read with SQL: to move a
 * rotation past its grace as time would, and to look for stored tokens.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authSuccessEnvelope, sessionList } from "../supabase/functions/_shared/contract/mod.ts";
import {
  clientRefreshBudgetMs,
  defaultRefreshGraceSeconds,
  refreshAttemptMs,
  refreshAttempts,
  tabClaimWindowMs,
  tabResultWaitMs,
} from "../supabase/functions/_shared/contract/refresh-budget.ts";
import { type ApiResponse, readResetCode, stackLog, uniqueEmail } from "./support/api.ts";
import { expectAuthError, expectSession } from "./support/auth.ts";
import { expectNotesError } from "./support/notes.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";

const password = "correct horse battery";
const sessionsEnvelope = authSuccessEnvelope(sessionList);

let stack: ScratchStack;
let short: ScratchStack;

beforeAll(async () => {
  [stack, short] = await Promise.all([
    startScratchStack("sessions", { env: { BCRYPT_COST: "4" } }),
    // Timeouts of seconds, to watch sessions end as they would after days.
    startScratchStack("sessions_short", {
      env: { BCRYPT_COST: "4", SESSION_IDLE_TIMEOUT_SECONDS: "4", SESSION_MAX_LIFETIME_SECONDS: "6" },
    }),
  ]);
});

afterAll(async () => {
  await Promise.all([stack?.stop(), short?.stop()]);
});

async function signUp(on: ScratchStack = stack, label = "session") {
  const email = uniqueEmail(label);
  const registered = expectSession(
    await on.call("/auth/register", { body: { name: label, email, password } }),
    201,
  );
  return { email, ...registered };
}

async function logIn(email: string, on: ScratchStack = stack, userAgent = "test-agent") {
  return expectSession(
    await on.call("/auth/login", { body: { email, password }, headers: { "user-agent": userAgent } }),
    200,
  );
}

function refresh(refreshToken: unknown, on: ScratchStack = stack): Promise<ApiResponse> {
  return on.call("/auth/refresh", { body: { refreshToken } });
}

function listNotes(accessToken: string, on: ScratchStack = stack): Promise<ApiResponse> {
  return on.call("/notes-fetch", { token: accessToken });
}

function expectRefused(response: ApiResponse, code: string) {
  expect(expectAuthError(response, 401).code).toBe(code);
}

function expectTokenRevoked(response: ApiResponse) {
  expectNotesError(response, 401);
  expect(response.body).toMatchObject({ code: "token_revoked" });
}

/** Moves the session's last rotation `seconds` into the past, as waiting would. */
async function ageRotation(refreshToken: string, seconds: number) {
  const sessionId = refreshToken.split(".")[0];
  await stack.sql`update app.sessions set refreshed_at = refreshed_at - make_interval(secs => ${seconds})
                  where id = ${sessionId}`;
}

describe("POST /auth/refresh", () => {
  it("rotates: a new access token and a new refresh token, and the session lives on", async () => {
    const user = await signUp();
    const first = expectSession(await refresh(user.refreshToken), 200);
    expect(first.payload.id).toBe(user.payload.id);
    expect(first.refreshToken).not.toBe(user.refreshToken);
    expect((await listNotes(first.accessToken)).status).toBe(200);
    const second = expectSession(await refresh(first.refreshToken), 200);
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect((await listNotes(second.accessToken)).status).toBe(200);
    // The access token issued before the refresh stays valid until it expires: it belongs to the same session.
    expect((await listNotes(user.accessToken)).status).toBe(200);
  });

  it("lets 5 concurrent refreshes of one token all succeed and converge on one session state", async () => {
    const user = await signUp();
    const answers = await Promise.all(Array.from({ length: 5 }, () => refresh(user.refreshToken)));
    const sessions = answers.map((answer) => expectSession(answer, 200));
    // Every tab ends up holding the same current refresh token.
    expect(new Set(sessions.map((each) => each.refreshToken)).size).toBe(1);
    for (const each of sessions) expect((await listNotes(each.accessToken)).status).toBe(200);
    const next = expectSession(await refresh(sessions[0].refreshToken), 200);
    expect((await listNotes(next.accessToken)).status).toBe(200);
  });

  it("answers the current session to a replaced token sent as late as the typed client may send it", async () => {
    const user = await signUp();
    // The answer to this refresh is lost; the client's last retry comes at the end of its whole budget.
    const rotated = expectSession(await refresh(user.refreshToken), 200);
    await ageRotation(user.refreshToken, Math.ceil(clientRefreshBudgetMs / 1000));

    const retried = expectSession(await refresh(user.refreshToken), 200);
    expect(retried.refreshToken).toBe(rotated.refreshToken);
    expect((await listNotes(retried.accessToken)).status).toBe(200);
    expect(expectSession(await refresh(retried.refreshToken), 200).payload.id).toBe(user.payload.id);
  });

  it("ends the session when a replaced token is used after the grace, and leaves other sessions alone", async () => {
    const user = await signUp();
    const otherDevice = await logIn(user.email);
    const rotated = expectSession(await refresh(user.refreshToken), 200);
    await ageRotation(user.refreshToken, defaultRefreshGraceSeconds + 1);

    expectRefused(await refresh(user.refreshToken), "refresh_token_reused");
    // The thief's copy and the owner's current tokens of that session all stop working.
    expectRefused(await refresh(rotated.refreshToken), "session_revoked");
    expectTokenRevoked(await listNotes(rotated.accessToken));
    expectTokenRevoked(await listNotes(user.accessToken));
    // The account's other session is untouched.
    expect((await listNotes(otherDevice.accessToken)).status).toBe(200);
    expect(expectSession(await refresh(otherDevice.refreshToken), 200).payload.id).toBe(user.payload.id);
  });

  it("ends the session when an older generation comes back, even within the grace", async () => {
    const user = await signUp();
    const second = expectSession(await refresh(user.refreshToken), 200);
    const third = expectSession(await refresh(second.refreshToken), 200);
    expectRefused(await refresh(user.refreshToken), "refresh_token_reused");
    expectTokenRevoked(await listNotes(third.accessToken));
    expectRefused(await refresh(third.refreshToken), "session_revoked");
  });

  it("refuses tampered and junk tokens without harming the real session", async () => {
    const user = await signUp();
    const [sessionId, generation, mac] = user.refreshToken.split(".");
    const flipped = mac[0] === "A" ? `B${mac.slice(1)}` : `A${mac.slice(1)}`;
    // The same MAC with a padding bit of its last character set: it decodes to the same bytes, so only the token's
    // pattern tells it from the one the service wrote.
    const base64url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const respelt = `${mac.slice(0, -1)}${base64url[base64url.indexOf(mac.at(-1)!) ^ 1]}`;
    const forgeries = [
      `${sessionId}.${generation}.${flipped}`,
      `${sessionId}.${generation}.${respelt}`,
      `${sessionId}.${Number(generation) + 5}.${mac}`,
      `${crypto.randomUUID()}.${generation}.${mac}`,
      "junk",
      `${user.refreshToken}x`,
      user.accessToken,
    ];
    for (const forged of forgeries) expectRefused(await refresh(forged), "refresh_token_invalid");
    // The genuine token still rotates, from the generation it was issued at.
    const rotated = expectSession(await refresh(user.refreshToken), 200);
    expect(rotated.refreshToken.split(".")[1]).toBe(String(Number(generation) + 1));
    expect((await listNotes(user.accessToken)).status).toBe(200);
  });

  it("answers 400 for a body that is not { refreshToken: string }", async () => {
    for (const body of [{}, { refreshToken: 42 }, { refreshToken: "" }, "[]", "not json"]) {
      const error = expectAuthError(await stack.call("/auth/refresh", { body }), 400);
      expect(error.message).toMatch(/refreshToken|JSON/);
    }
  });

  it("needs the apikey, as every auth endpoint does", async () => {
    const user = await signUp();
    expectAuthError(
      await stack.call("/auth/refresh", { body: { refreshToken: user.refreshToken }, apiKey: null }),
      401,
    );
  });
});

describe("POST /auth/logout", () => {
  async function threeSessions() {
    const user = await signUp();
    return { user, laptop: await logIn(user.email), phone: await logIn(user.email) };
  }

  it("local (the default, with or without a body) ends the caller's session only", async () => {
    for (const body of [undefined, {}, { scope: "local" }]) {
      const { user, laptop, phone } = await threeSessions();
      const answer = await stack.call("/auth/logout", { method: "POST", token: laptop.accessToken, body });
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body).toMatchObject({ data: { scope: "local", sessionsEnded: 1 } });
      expectTokenRevoked(await listNotes(laptop.accessToken));
      expectRefused(await refresh(laptop.refreshToken), "session_revoked");
      expect((await listNotes(phone.accessToken)).status).toBe(200);
      expect((await listNotes(user.accessToken)).status).toBe(200);
    }
  });

  it("others ends every other session and keeps the caller's", async () => {
    const { user, laptop, phone } = await threeSessions();
    const answer = await stack.call("/auth/logout", { token: laptop.accessToken, body: { scope: "others" } });
    expect(answer.body).toMatchObject({ data: { scope: "others", sessionsEnded: 2 } });
    expect((await listNotes(laptop.accessToken)).status).toBe(200);
    expectTokenRevoked(await listNotes(phone.accessToken));
    expectTokenRevoked(await listNotes(user.accessToken));
    expectRefused(await refresh(phone.refreshToken), "session_revoked");
  });

  it("global ends all of them", async () => {
    const { user, laptop, phone } = await threeSessions();
    const answer = await stack.call("/auth/logout", { token: laptop.accessToken, body: { scope: "global" } });
    expect(answer.body).toMatchObject({ data: { scope: "global", sessionsEnded: 3 } });
    for (const each of [user, laptop, phone]) {
      expectTokenRevoked(await listNotes(each.accessToken));
      expectRefused(await refresh(each.refreshToken), "session_revoked");
    }
  });

  it("answers 400 for an unknown scope and 401 without a token", async () => {
    const user = await signUp();
    const unknown = expectAuthError(
      await stack.call("/auth/logout", { token: user.accessToken, body: { scope: "all" } }),
      400,
    );
    expect(unknown.fields).toEqual([{ field: "scope", message: "scope must be one of local, others, global" }]);
    expect(expectAuthError(await stack.call("/auth/logout", { method: "POST" }), 401).code).toBe("token_missing");
    expect((await listNotes(user.accessToken)).status).toBe(200);
  });
});

describe("GET and DELETE /auth/sessions", () => {
  it("lists the live sessions with exactly one current, and ends one from another", async () => {
    const user = await signUp();
    const phone = await logIn(user.email, stack, "Phone/1.0");
    const listed = sessionsEnvelope.parse((await stack.call("/auth/sessions", { token: phone.accessToken })).body).data
      .sessions;
    expect(listed).toHaveLength(2);
    expect(listed.filter((each) => each.current)).toHaveLength(1);
    const current = listed.find((each) => each.current);
    expect(current?.userAgent).toBe("Phone/1.0");
    const registration = listed.find((each) => !each.current);
    if (!registration) throw new Error("the registration's session is not listed");

    const ended = await stack.call(`/auth/sessions?id=${registration.id}`, {
      method: "DELETE",
      token: phone.accessToken,
    });
    expect(ended.status, ended.text).toBe(200);
    expect(ended.body).toMatchObject({ data: { id: registration.id } });
    expectTokenRevoked(await listNotes(user.accessToken));
    expectRefused(await refresh(user.refreshToken), "session_revoked");
    const after = sessionsEnvelope.parse((await stack.call("/auth/sessions", { token: phone.accessToken })).body);
    expect(after.data.sessions.map((each) => each.id)).toEqual([current?.id]);
    // Ended once; a second time it is no live session of the caller's.
    expectAuthError(
      await stack.call(`/auth/sessions?id=${registration.id}`, { method: "DELETE", token: phone.accessToken }),
      404,
    );
  });

  it("answers 404 for another user's session and for an id that is no session", async () => {
    const owner = await signUp();
    const stranger = await signUp();
    const ownersSession = owner.refreshToken.split(".")[0];
    for (const id of [ownersSession, crypto.randomUUID(), "not-a-uuid"]) {
      expectAuthError(
        await stack.call(`/auth/sessions?id=${encodeURIComponent(id)}`, {
          method: "DELETE",
          token: stranger.accessToken,
        }),
        404,
      );
    }
    expect((await listNotes(owner.accessToken)).status).toBe(200);
    expectAuthError(await stack.call("/auth/sessions", { method: "DELETE", token: stranger.accessToken }), 400);
  });
});

describe("GET /auth/user", () => {
  it("answers the caller's user while the session holds, and 401 after sign-out", async () => {
    const user = await signUp();
    const answer = await stack.call("/auth/user", { token: user.accessToken });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ success: true, data: { payload: user.payload } });
    await stack.call("/auth/logout", { token: user.accessToken, body: {} });
    const after = await stack.call("/auth/user", { token: user.accessToken });
    expect(expectAuthError(after, 401).code).toBe("token_revoked");
    expect(expectAuthError(await stack.call("/auth/user"), 401).code).toBe("token_missing");
  });
});

describe("setting a password with a code", () => {
  it("ends every session of the account and starts a new one", async () => {
    const user = await signUp();
    const phone = await logIn(user.email);
    await stack.call("/auth/request-password-reset", { body: { email: user.email } });
    const code = await readResetCode(user.email, 0, stack.logFile);
    const reset = expectSession(
      await stack.call("/auth/create-password", { body: { email: user.email, password: "a new password", code } }),
      200,
    );
    for (const each of [user, phone]) {
      expectTokenRevoked(await listNotes(each.accessToken));
      expectRefused(await refresh(each.refreshToken), "session_revoked");
    }
    const listed = sessionsEnvelope.parse((await stack.call("/auth/sessions", { token: reset.accessToken })).body);
    expect(listed.data.sessions).toHaveLength(1);
    expect(expectSession(await refresh(reset.refreshToken), 200).payload.id).toBe(user.payload.id);
  });
});

describe("timeouts", () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  // Margins of a second or more either side of each timeout: three suites run at once, and a request can take that.
  it("ends a session that is not refreshed within the idle timeout", async () => {
    const user = await signUp(short);
    expect((await listNotes(user.accessToken, short)).status).toBe(200);
    await sleep(5_000);
    expectTokenRevoked(await listNotes(user.accessToken, short));
    expectRefused(await refresh(user.refreshToken, short), "session_expired");
  });

  it("ends a session at its maximum lifetime however often it is refreshed", async () => {
    const user = await signUp(short);
    await sleep(2_000);
    const first = expectSession(await refresh(user.refreshToken, short), 200);
    await sleep(2_000);
    const second = expectSession(await refresh(first.refreshToken, short), 200);
    // Each refresh was within the 4-second idle timeout, and the last one's would run to about 8 seconds, but the
    // session is now past its 6.
    await sleep(3_000);
    expectTokenRevoked(await listNotes(second.accessToken, short));
    expectRefused(await refresh(second.refreshToken, short), "session_expired");
  });
});

describe("refresh tokens at rest", () => {
  it("are in no table and no log line", async () => {
    const user = await signUp();
    const rotated = expectSession(await refresh(user.refreshToken), 200);
    const secrets = [user.refreshToken, rotated.refreshToken].map((token) => token.split(".")[2]);
    const tables = await stack.sql<{ name: string }[]>`
      select format('%I.%I', table_schema, table_name) as name from information_schema.tables
      where table_schema in ('app', 'public') and table_type = 'BASE TABLE'`;
    expect(tables.map((table) => table.name)).toContain("app.sessions");
    for (const { name } of tables) {
      const rows = await stack.sql.unsafe(`select t::text as row from ${name} t`);
      for (const { row } of rows) for (const secret of secrets) expect(row).not.toContain(secret);
    }
    const log = stackLog(stack.logFile);
    for (const secret of secrets) expect(log).not.toContain(secret);
  });
});

describe("the refresh budget", () => {
  it("is stated in docs/sessions.md and docs/configuration.md as the client and the service use it", () => {
    const read = (doc: string) => readFileSync(new URL(`../docs/${doc}`, import.meta.url), "utf8").split("\n");
    const sessionsDoc = read("sessions.md");
    // The Time column of the row of docs/sessions.md's table that starts with `step`.
    const time = (step: string) => sessionsDoc.find((line) => line.startsWith(`| ${step}`))?.split("|")[2].trim();
    const seconds = (ms: number) => `${ms / 1000} s`;
    expect(time("tabs sharing a storage announce")).toBe(`${tabClaimWindowMs} ms`);
    expect(time("each refresh request waits")).toBe(seconds(refreshAttemptMs));
    expect(time("requests per refresh")).toBe(`${refreshAttempts}, so ${seconds(refreshAttempts * refreshAttemptMs)}`);
    expect(time("another tab waits")).toBe(
      `${seconds(tabResultWaitMs)}, then it refreshes itself (${seconds(refreshAttempts * refreshAttemptMs)})`,
    );
    expect(time("the client's whole refresh")).toBe(seconds(clientRefreshBudgetMs));
    expect(time("the service's grace")).toBe(`${defaultRefreshGraceSeconds} s`);
    const graceSetting = read("configuration.md").find((line) => line.startsWith("| `SESSION_REFRESH_GRACE_SECONDS`"));
    expect(graceSetting).toContain(seconds(clientRefreshBudgetMs));
    expect(graceSetting?.split("|")[3].trim()).toBe(`\`${defaultRefreshGraceSeconds}\``);
  });
});
