/**
 * The security audit log as each flow writes it, in the same transaction as
 * the change it records: what a user reads at GET /auth/events (their own
 * events only), that no event holds a secret, that the log is kept for
 * AUDIT_RETENTION_DAYS and pruned by the mail drain. Login's own events
 * (login_succeeded, login_failed, login_refused_by_limit) are written by the
 * login statements.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  authSuccessEnvelope,
  type SecurityEvent,
  securityEventList,
} from "../supabase/functions/_shared/contract/mod.ts";
import { readMailedCode, readResetCode } from "./support/api.ts";
import { expectAuthError, expectSession } from "./support/auth.ts";
import { signUp, signUpAdmin, testPassword } from "./support/admin.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";

const eventsEnvelope = authSuccessEnvelope(securityEventList);
let stack: ScratchStack;

beforeAll(async () => {
  stack = await startScratchStack("security_events", { env: { BCRYPT_COST: "4", AUDIT_RETENTION_DAYS: "30" } });
});

afterAll(async () => {
  await stack?.stop();
});

async function ownEvents(accessToken: string, query = ""): Promise<SecurityEvent[]> {
  const response = await stack.call(`/auth/events${query}`, { token: accessToken });
  expect(response.status, response.text).toBe(200);
  return eventsEnvelope.parse(response.body).data.events;
}

const typesOf = (events: SecurityEvent[]) => events.map((event) => event.type).reverse();

describe("GET /auth/events", () => {
  it("records each step of an account's life, oldest to newest, with no secret in any event", async () => {
    const agent = { "user-agent": "events-test/1.0" };
    const user = await signUp(stack, "lifecycle", agent);
    const verification = await readMailedCode(user.email, { kind: "verification", logFile: stack.logFile });
    const verifying = { body: { email: user.email, code: verification }, token: user.accessToken, headers: agent };
    expectSession(await stack.call("/auth/verify-email", verifying), 200);
    const login = { body: { email: user.email, password: testPassword }, headers: agent };
    const laptop = expectSession(await stack.call("/auth/login", login), 200);
    expect((await stack.call("/auth/logout", { token: laptop.accessToken, body: {} })).status).toBe(200);

    // A refresh token used again after its rotation: the session ends as reused.
    const phone = expectSession(await stack.call("/auth/login", login), 200);
    expectSession(await stack.call("/auth/refresh", { body: { refreshToken: phone.refreshToken } }), 200);
    await stack.sql`update app.sessions set refreshed_at = now() - interval '1 minute'
                    where id = ${phone.refreshToken.split(".")[0]}`;
    const reused = await stack.call("/auth/refresh", { body: { refreshToken: phone.refreshToken } });
    expect(expectAuthError(reused, 401).code).toBe("refresh_token_reused");

    const newPassword = "a longer passphrase now";
    const changed = expectSession(
      await stack.call("/auth/change-password", {
        token: user.accessToken,
        body: { currentPassword: testPassword, newPassword },
        headers: agent,
      }),
      200,
    );
    expect((await stack.call("/auth/request-password-reset", { body: { email: user.email } })).status).toBe(200);
    const code = await readResetCode(user.email, 0, stack.logFile);
    const reset = expectSession(
      await stack.call("/auth/create-password", { body: { email: user.email, password: testPassword, code } }),
      200,
    );
    expect(expectAuthError(await stack.call("/auth/events", { token: changed.accessToken }), 401).code)
      .toBe("token_revoked");

    const response = await stack.call("/auth/events?limit=100", { token: reset.accessToken });
    const events = eventsEnvelope.parse(response.body).data.events;
    expect(typesOf(events)).toEqual([
      "session_started", // register
      "registered",
      "email_verified", // verify-email, which signs in
      "session_started",
      "session_started", // laptop
      "login_succeeded",
      "session_ended", // its logout
      "session_started", // phone
      "login_succeeded",
      "refresh_token_reused",
      "password_changed", // ends the other sessions, then starts the caller's new one
      "session_ended",
      "session_ended",
      "session_started",
      "password_reset_requested",
      "password_set_with_code", // ends every session, then starts one
      "session_ended",
      "session_started",
    ]);
    for (const event of events) expect(event).toMatchObject({ userId: user.id, actorId: user.id });
    const ended = events.filter((event) => event.type === "session_ended").map((event) => event.details.reason);
    expect(ended.reverse()).toEqual(["logout", "password_changed", "password_changed", "password_changed"]);
    const registered = events.filter((event) => event.type === "session_started").at(-1);
    expect(registered).toMatchObject({ userAgent: "events-test/1.0", details: { sessionId: expect.any(String) } });

    // Nothing a thief could use: no password, code, token or hash, and not the email address.
    const secrets = [testPassword, newPassword, verification, code, user.email, reset.refreshToken, phone.refreshToken];
    for (const secret of secrets) expect(response.text).not.toContain(secret);
    const stored = await stack.sql`select * from app.security_events where user_id = ${user.id}`;
    for (const secret of secrets) expect(JSON.stringify(stored)).not.toContain(secret);
    expect(JSON.stringify(stored)).not.toMatch(/\$2[ab]\$|"(password|code|token|hash)"/);
  });

  it("lists only the caller's own events, newest first, a page at a time", async () => {
    const [ada, bob] = await Promise.all([signUp(stack, "ada"), signUp(stack, "bob")]);
    const own = await ownEvents(ada.accessToken);
    expect(own.length).toBeGreaterThan(0);
    expect(own.every((event) => event.userId === ada.id)).toBe(true);
    expect((await ownEvents(bob.accessToken)).every((event) => event.userId === bob.id)).toBe(true);
    // Naming another account shows nothing of it: the caller is the token's, and `id` is no parameter here.
    const named = expectAuthError(await stack.call(`/auth/events?id=${bob.id}`, { token: ada.accessToken }), 400);
    expect(named.fields).toEqual([{ field: "id", message: "id is not a query parameter of this endpoint" }]);

    const [newest, older] = own;
    expect(Number(newest.id)).toBeGreaterThan(Number(older.id));
    expect(await ownEvents(ada.accessToken, `?limit=1&before=${newest.id}`)).toEqual([older]);
    const limit = expectAuthError(await stack.call("/auth/events?limit=0", { token: ada.accessToken }), 400);
    expect(limit.fields?.[0]?.field).toBe("limit");
    const before = expectAuthError(await stack.call("/auth/events?before=soon", { token: ada.accessToken }), 400);
    expect(before.fields?.[0]?.field).toBe("before");
    expect(expectAuthError(await stack.call("/auth/events"), 401).code).toBe("token_missing");
  });

  it("shows the account that an admin acted on it, never the admin's address or user agent", async () => {
    const admin = await signUpAdmin(stack, "watched-admin");
    const user = await signUp(stack, "watched-user", { "user-agent": "own-device/1.0" });
    const fromConsole = { "user-agent": "admin-console/2.0" };
    for (const status of ["SUSPENDED", "ACTIVE"]) {
      const changed = await stack.call("/admin-users", {
        token: admin.accessToken,
        body: { id: user.id, status },
        headers: fromConsole,
      });
      expect(changed.status, changed.text).toBe(200);
    }
    const session = expectSession(
      await stack.call("/auth/login", { body: { email: user.email, password: testPassword } }),
      200,
    );
    const events = await ownEvents(session.accessToken);
    const byAdmin = events.filter((event) => event.actorId === admin.id);
    expect(byAdmin.map((event) => event.type)).toEqual(["account_reactivated", "session_ended", "account_suspended"]);
    for (const event of byAdmin) expect(event).toMatchObject({ address: null, userAgent: null });
    // Its own acts keep its own client: the first session, started at sign-up.
    expect(events.findLast((event) => event.type === "session_started"))
      .toMatchObject({ actorId: user.id, userAgent: "own-device/1.0", address: expect.any(String) });

    // The admin's own view keeps the admin's client.
    const seen = await stack.call(`/admin-users/events?id=${user.id}`, { token: admin.accessToken });
    const suspension = eventsEnvelope.parse(seen.body).data.events.find((event) => event.type === "account_suspended");
    expect(suspension).toMatchObject({ actorId: admin.id, userAgent: "admin-console/2.0" });
  });

  it("keeps an account's deletion on record by its id only", async () => {
    const user = await signUp(stack, "leaving");
    const deleted = await stack.call("/auth/delete-account", {
      token: user.accessToken,
      body: { password: testPassword },
    });
    expect(deleted.status, deleted.text).toBe(200);
    const [last] = await stack.sql<{ type: string; user_id: string; details: unknown }[]>`
      select type, user_id, details from app.security_events where user_id = ${user.id} order by id desc limit 1`;
    expect(last).toEqual({ type: "account_deleted", user_id: user.id, details: {} });
  });

  it("erases a deleted admin's address and user agent from the events it caused, keeping the account's own", async () => {
    const admin = await signUpAdmin(stack, "departing-admin");
    const user = await signUp(stack, "acted-on", { "user-agent": "own-device/1.0" });
    const suspended = await stack.call("/admin-users", {
      token: admin.accessToken,
      body: { id: user.id, status: "SUSPENDED" },
      headers: { "user-agent": "admin-console/2.0" },
    });
    expect(suspended.status, suspended.text).toBe(200);
    const deleted = await stack.call("/auth/delete-account", {
      token: admin.accessToken,
      body: { password: testPassword },
    });
    expect(deleted.status, deleted.text).toBe(200);

    const events = await stack.sql<
      { type: string; actor_id: string; address: string | null; user_agent: string | null }[]
    >`
      select type, actor_id, address, user_agent from app.security_events where user_id = ${user.id} order by id`;
    expect(events.find((event) => event.type === "account_suspended")).toEqual({
      type: "account_suspended",
      actor_id: admin.id,
      address: null,
      user_agent: null,
    });
    expect(events.find((event) => event.type === "session_started")).toMatchObject({ user_agent: "own-device/1.0" });
    // Erasing is for deleted accounts only: a living account's events stay as written.
    await expect(
      stack.sql`update app.security_events set address = null, user_agent = null
                where user_id = ${user.id} and type = 'session_started'`,
    ).rejects.toThrow(/append-only/);
  });
});

describe("login's own events", () => {
  it("records a failed login and a login refused by the limits, with the client, and nothing for an unknown email", async () => {
    const user = await signUp(stack, "guessed");
    const from = { "x-forwarded-for": "203.0.113.9", "user-agent": "guesser/2.0" };
    for (let guess = 0; guess < 6; guess++) {
      await stack.call("/auth/login", { body: { email: user.email, password: `guess ${guess}` }, headers: from });
    }
    await stack.call("/auth/login", { body: { email: "nobody-at-all@example.com", password: "whatever" } });
    // A failed login is recorded just after its answer.
    let events: SecurityEvent[] = [];
    for (let wait = 0; wait < 50 && events.length < 6; wait++) {
      events = (await ownEvents(user.accessToken)).filter((event) => event.type.startsWith("login_"));
      if (events.length < 6) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // The fifth failure is written after its answer, so it may land after the sixth attempt's refusal.
    expect(typesOf(events).sort()).toEqual([...Array(5).fill("login_failed"), "login_refused_by_limit"].sort());
    expect(events.find((event) => event.type === "login_refused_by_limit")).toMatchObject({
      userAgent: "guesser/2.0",
      details: { retryAfter: expect.any(Number) },
    });
    const [{ count }] = await stack.sql<{ count: number }[]>`
      select count(*)::int as count from app.security_events where type like 'login_%' and user_id is null`;
    expect(count).toBe(0);
  });
});

describe("the audit log's retention", () => {
  it("is pruned past AUDIT_RETENTION_DAYS by the mail drain, and no statement may rewrite or delete an event", async () => {
    const user = await signUp(stack, "retained");
    await stack.sql`insert into app.security_events (at, type, user_id, details) values
      (now() - interval '31 days', 'login_failed', ${user.id}, '{}'),
      (now() - interval '29 days', 'login_failed', ${user.id}, '{}')`;
    const deadline = Date.now() + 10_000;
    let ages: string[] = [];
    while (Date.now() < deadline) {
      const rows = await stack.sql<{ days: string }[]>`
        select extract(day from now() - at)::text as days from app.security_events
        where user_id = ${user.id} and type = 'login_failed' order by at`;
      ages = rows.map((row) => row.days);
      if (ages.length === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(ages).toEqual(["29"]);
    await expect(stack.sql`update app.security_events set type = 'registered' where user_id = ${user.id}`)
      .rejects.toThrow(/append-only/);
    await expect(stack.sql`delete from app.security_events where user_id = ${user.id}`).rejects.toThrow(/append-only/);
  });
});
