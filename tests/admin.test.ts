/**
 * What ADMIN means: an operator grants it with `npm run admin`, the role is
 * read from the database on every admin request, and an admin lists,
 * suspends and reactivates accounts without ever seeing a note's content.
 * Runs on a stack of its own, whose database the operator's command changes.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { pgliteExtensions } from "../dev/pglite-extensions.ts";
import { lockFileName } from "../dev/data-dir-lock.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  authSuccessEnvelope,
  currentUser,
  managedUserList,
  securityEventList,
} from "../supabase/functions/_shared/contract/mod.ts";
import { uniqueEmail } from "./support/api.ts";
import { expectAuthError, expectSession } from "./support/auth.ts";
import { runAdminCommand, signUp, signUpAdmin, testPassword } from "./support/admin.ts";
import { createMigratedPglite } from "./support/database.ts";
import { expectNotesError } from "./support/notes.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";

const usersEnvelope = authSuccessEnvelope(managedUserList);
const userEnvelope = authSuccessEnvelope(currentUser);
const eventsEnvelope = authSuccessEnvelope(securityEventList);

let stack: ScratchStack;

beforeAll(async () => {
  stack = await startScratchStack("admin", { env: { BCRYPT_COST: "4" } });
});

afterAll(async () => {
  await stack?.stop();
});

function listUsers(token: string, query = "") {
  return stack.call(`/admin-users${query}`, { token });
}

function setStatus(token: string, body: unknown, headers: Record<string, string> = {}) {
  return stack.call("/admin-users", { token, body, headers });
}

async function roleOf(email: string): Promise<string> {
  const [row] = await stack.sql<{ role: string }[]>`select role from app.users where email = ${email}`;
  return row.role;
}

describe("npm run admin", () => {
  it("grants and revokes the role by email against DATABASE_URL, and records it with no actor", async () => {
    const user = await signUp(stack, "promoted");
    const env = { DATABASE_URL: stack.databaseUrl };
    const granted = await runAdminCommand(["grant", `  ${user.email.toUpperCase()} `], env);
    expect(granted.code, granted.stderr).toBe(0);
    expect(granted.stdout).toContain(`${user.email} is now an admin`);
    expect(await roleOf(user.email)).toBe("ADMIN");
    const again = await runAdminCommand(["grant", user.email], env);
    expect(again.stdout).toContain("was already an admin");

    const revoked = await runAdminCommand(["revoke", user.email], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(await roleOf(user.email)).toBe("STANDARD_USER");
    const events = await stack.sql<{ type: string; actor_id: string | null; details: { role: string } }[]>`
      select type, actor_id, details from app.security_events
      where user_id = ${user.id} and type like 'role_%' order by id`;
    expect(events.map(({ type, actor_id, details }) => [type, actor_id, details.role])).toEqual([
      ["role_granted", null, "ADMIN"],
      ["role_revoked", null, "STANDARD_USER"],
    ]);
  });

  it("answers an unknown address, or a wrong usage, with a clear error and changes nothing", async () => {
    const env = { DATABASE_URL: stack.databaseUrl };
    const unknown = await runAdminCommand(["grant", "nobody-here@example.com"], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("No account has the email address nobody-here@example.com");
    const usage = await runAdminCommand(["promote", "x@example.com"], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("usage: npm run admin -- grant <email>");
  });

  it("changes the embedded database when DATABASE_URL is unset, and refuses one a stack holds open", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "admin-pglite-"));
    try {
      const db = await createMigratedPglite(dataDir);
      await db.query("insert into app.users (name, email, password_hash) values ('Local', 'local@example.com', 'x')");
      await db.close();

      const granted = await runAdminCommand(["grant", "local@example.com"], { PGLITE_DATA_DIR: dataDir });
      expect(granted.code, granted.stderr).toBe(0);
      const reopened = await PGlite.create({ dataDir, extensions: pgliteExtensions });
      const { rows } = await reopened.query<{ role: string }>("select role from app.users");
      await reopened.close();
      expect(rows).toEqual([{ role: "ADMIN" }]);

      // It holds no lock once it is done.
      expect(existsSync(join(dataDir, lockFileName))).toBe(false);

      // The lock a running stack holds (this test's process stands in for it).
      writeFileSync(join(dataDir, lockFileName), `${process.pid}\n`);
      const refused = await runAdminCommand(["revoke", "local@example.com"], { PGLITE_DATA_DIR: dataDir });
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim()).toBe(
        `${dataDir} is in use by another process (pid ${process.pid}): stop npm start first`,
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
    // A cluster on disk and two Deno processes: beside two other suites on a PostgreSQL run, more than the default.
  }, 90_000);
});

describe("who may call the admin API", () => {
  it("refuses a caller without a token (401) and one whose account is no admin (403 admin_required)", async () => {
    const user = await signUp(stack, "plain");
    expect(expectAuthError(await stack.call("/admin-users"), 401).code).toBe("token_missing");
    expect(expectAuthError(await listUsers(user.accessToken), 403).code).toBe("admin_required");
    const suspend = await setStatus(user.accessToken, { id: user.id, status: "SUSPENDED" });
    expect(expectAuthError(suspend, 403).code).toBe("admin_required");
    const events = await stack.call(`/admin-users/events?id=${user.id}`, { token: user.accessToken });
    expect(expectAuthError(events, 403).code).toBe("admin_required");
    // Only an operator's act makes an admin: the token's own role claim counts for nothing.
    expect(await roleOf(user.email)).toBe("STANDARD_USER");
  });

  it("refuses a revoked admin on its next request, with the token it was using", async () => {
    const admin = await signUpAdmin(stack, "revoked-admin");
    expect(usersEnvelope.parse((await listUsers(admin.accessToken)).body).data.users.length).toBeGreaterThan(0);
    const revoked = await runAdminCommand(["revoke", admin.email], { DATABASE_URL: stack.databaseUrl });
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(expectAuthError(await listUsers(admin.accessToken), 403).code).toBe("admin_required");
  });

  it("refuses an admin whose session ended (401 token_revoked)", async () => {
    const admin = await signUpAdmin(stack, "signed-out-admin");
    await stack.call("/auth/logout", { token: admin.accessToken, body: {} });
    expect(expectAuthError(await listUsers(admin.accessToken), 401).code).toBe("token_revoked");
  });
});

describe("GET /admin-users", () => {
  it("lists accounts with their note counts and last activity, filtered by query and status, never a note", async () => {
    const admin = await signUpAdmin(stack, "lister");
    const marker = crypto.randomUUID().slice(0, 8);
    const writer = await signUp(stack, `writer-${marker}`);
    const secret = `secret title ${crypto.randomUUID()}`;
    for (const title of [secret, "second"]) {
      const created = await stack.call("/notes-create", {
        token: writer.accessToken,
        body: { title, content: secret },
      });
      expect(created.status, created.text).toBe(201);
    }
    const quiet = await signUp(stack, `writer-${marker}-quiet`);

    const found = await listUsers(admin.accessToken, `?query=${marker.toUpperCase()}`);
    expect(found.status, found.text).toBe(200);
    expect(found.text).not.toContain(secret);
    const page = usersEnvelope.parse(found.body).data;
    expect(page.users.map((user) => user.email).sort()).toEqual([writer.email, quiet.email].sort());
    const listedWriter = page.users.find((user) => user.id === writer.id);
    expect(listedWriter).toMatchObject({ noteCount: 2, role: "STANDARD_USER", status: "ACTIVE" });
    expect(Date.parse(listedWriter?.lastActiveAt ?? "")).toBeGreaterThan(Date.now() - 60_000);
    expect(page.pagination).toEqual({ total: 2, limit: 10, offset: 0, hasMore: false });

    // Newest first, a page at a time; a page past the end keeps the total.
    const first = usersEnvelope.parse((await listUsers(admin.accessToken, `?query=${marker}&limit=1`)).body).data;
    expect(first.users.map((user) => user.id)).toEqual([quiet.id]);
    expect(first.pagination).toEqual({ total: 2, limit: 1, offset: 0, hasMore: true });
    const past = usersEnvelope.parse((await listUsers(admin.accessToken, `?query=${marker}&offset=5`)).body).data;
    expect(past).toEqual({ users: [], pagination: { total: 2, limit: 10, offset: 5, hasMore: false } });

    await stack.sql`update app.users set status = 'SUSPENDED' where id = ${quiet.id}`;
    const suspended = usersEnvelope.parse(
      (await listUsers(admin.accessToken, `?query=${marker}&status=SUSPENDED`)).body,
    ).data;
    expect(suspended.users.map((user) => user.id)).toEqual([quiet.id]);
    // LIKE's wildcards in a query are matched literally.
    const wildcard = usersEnvelope.parse((await listUsers(admin.accessToken, "?query=%25_%25")).body).data;
    expect(wildcard.pagination.total).toBe(0);
  });

  it("answers 400 naming the parameter for an unknown status or a limit out of range", async () => {
    const admin = await signUpAdmin(stack, "bad-filter");
    const status = expectAuthError(await listUsers(admin.accessToken, "?status=BANNED"), 400);
    expect(status.fields?.[0]?.field).toBe("status");
    const limit = expectAuthError(await listUsers(admin.accessToken, "?limit=101"), 400);
    expect(limit.fields?.[0]?.field).toBe("limit");
  });
});

describe("POST /admin-users", () => {
  it("suspends an account: its tokens are refused on their next request and it cannot log in; reactivation lets it", async () => {
    const admin = await signUpAdmin(stack, "suspender");
    const user = await signUp(stack, "suspended");
    expect((await stack.call("/notes-fetch", { token: user.accessToken })).status).toBe(200);

    const suspended = await setStatus(admin.accessToken, { id: user.id, status: "SUSPENDED" });
    expect(suspended.status, suspended.text).toBe(200);
    expect(userEnvelope.parse(suspended.body).data.payload).toMatchObject({ id: user.id, status: "SUSPENDED" });
    const refused = await stack.call("/notes-fetch", { token: user.accessToken });
    expectNotesError(refused, 401);
    expect(refused.body).toMatchObject({ code: "token_revoked" });
    expect(expectAuthError(await stack.call("/auth/refresh", { body: { refreshToken: user.refreshToken } }), 401).code)
      .toBe("session_revoked");
    const login = { body: { email: user.email, password: testPassword } };
    expectAuthError(await stack.call("/auth/login", login), 403);

    const reactivated = await setStatus(admin.accessToken, { id: user.id, status: "ACTIVE" });
    expect(userEnvelope.parse(reactivated.body).data.payload.status).toBe("ACTIVE");
    const session = expectSession(await stack.call("/auth/login", login), 200);
    expect((await stack.call("/notes-fetch", { token: session.accessToken })).status).toBe(200);
  });

  it("refuses self-suspension (400), an unknown or malformed id (404) and an unknown status (400)", async () => {
    const admin = await signUpAdmin(stack, "careful");
    const self = expectAuthError(await setStatus(admin.accessToken, { id: admin.id, status: "SUSPENDED" }), 400);
    expect(self.fields).toEqual([{ field: "id", message: "An admin cannot change its own status" }]);
    expect(await stack.sql`select status from app.users where id = ${admin.id}`).toEqual([{ status: "ACTIVE" }]);
    expectAuthError(await setStatus(admin.accessToken, { id: crypto.randomUUID(), status: "SUSPENDED" }), 404);
    expectAuthError(await setStatus(admin.accessToken, { id: "not-an-id", status: "SUSPENDED" }), 404);
    const user = await signUp(stack, "unchanged");
    const status = expectAuthError(await setStatus(admin.accessToken, { id: user.id, status: "BANNED" }), 400);
    expect(status.fields?.[0]?.field).toBe("status");
  });
});

describe("suspending an admin", () => {
  it("is refused (400 cannot_suspend_admin) until the operator revokes the role; then it is an account like any", async () => {
    const acting = await signUpAdmin(stack, "acting-admin");
    const other = await signUpAdmin(stack, "other-admin");
    const refused = expectAuthError(await setStatus(acting.accessToken, { id: other.id, status: "SUSPENDED" }), 400);
    expect(refused).toMatchObject({
      code: "cannot_suspend_admin",
      fields: [{ field: "id", message: "An admin cannot be suspended; an operator must revoke the role first" }],
    });
    expect(await stack.sql`select status from app.users where id = ${other.id}`).toEqual([{ status: "ACTIVE" }]);
    // Nothing ended: the other admin goes on working.
    expect((await listUsers(other.accessToken)).status).toBe(200);

    const revoked = await runAdminCommand(["revoke", other.email], { DATABASE_URL: stack.databaseUrl });
    expect(revoked.code, revoked.stderr).toBe(0);
    const suspended = await setStatus(acting.accessToken, { id: other.id, status: "SUSPENDED" });
    expect(suspended.status, suspended.text).toBe(200);
    expect(userEnvelope.parse(suspended.body).data.payload).toMatchObject({
      role: "STANDARD_USER",
      status: "SUSPENDED",
    });
  });

  it("lets an admin reactivate an admin an operator suspended", async () => {
    const acting = await signUpAdmin(stack, "lifting-admin");
    const other = await signUpAdmin(stack, "lifted-admin");
    await stack.sql`update app.users set status = 'SUSPENDED' where id = ${other.id}`;
    const reactivated = await setStatus(acting.accessToken, { id: other.id, status: "ACTIVE" });
    expect(reactivated.status, reactivated.text).toBe(200);
    expect(userEnvelope.parse(reactivated.body).data.payload).toMatchObject({ role: "ADMIN", status: "ACTIVE" });
  });
});

describe("GET /admin-users/events", () => {
  it("lists the account's events newest first, with the admin as the actor of its suspension", async () => {
    const admin = await signUpAdmin(stack, "auditor");
    const user = await signUp(stack, "audited", { "user-agent": "audited-agent/1.0" });
    await setStatus(admin.accessToken, { id: user.id, status: "SUSPENDED" }, { "user-agent": "admin-console/2.0" });
    const response = await stack.call(`/admin-users/events?id=${user.id}`, { token: admin.accessToken });
    expect(response.status, response.text).toBe(200);
    const { events } = eventsEnvelope.parse(response.body).data;
    // Register's statement starts the session inside it, so session_started is written just before registered.
    expect(events.map((event) => event.type)).toEqual([
      "session_ended",
      "account_suspended",
      "registered",
      "session_started",
    ]);
    const [ended, suspension, , started] = events;
    expect(suspension).toMatchObject({ userId: user.id, actorId: admin.id, userAgent: "admin-console/2.0" });
    expect(ended).toMatchObject({ actorId: admin.id, details: { reason: "account_suspended" } });
    expect(started).toMatchObject({ actorId: user.id, userAgent: "audited-agent/1.0" });

    const [newest] = events;
    const older = eventsEnvelope.parse(
      (await stack.call(`/admin-users/events?id=${user.id}&limit=2&before=${newest.id}`, { token: admin.accessToken }))
        .body,
    ).data.events;
    expect(older.map((event) => event.type)).toEqual(["account_suspended", "registered"]);
    const nobody = await stack.call(`/admin-users/events?id=${uniqueEmail()}`, { token: admin.accessToken });
    expect(eventsEnvelope.parse(nobody.body).data.events).toEqual([]);
  });
});

describe("an unknown query parameter", () => {
  it("is a 400 naming it on each admin operation, before anything is read or changed", async () => {
    const admin = await signUpAdmin(stack, "strict");
    const user = await signUp(stack, "left-alone");
    const problem = { field: "bogus", message: "bogus is not a query parameter of this endpoint" };
    const list = expectAuthError(await listUsers(admin.accessToken, "?limit=1&bogus=1"), 400);
    expect(list.fields).toEqual([problem]);
    const events = await stack.call(`/admin-users/events?id=${user.id}&bogus=1`, { token: admin.accessToken });
    expect(expectAuthError(events, 400).fields).toEqual([problem]);
    const suspend = await stack.call("/admin-users?bogus=1", {
      token: admin.accessToken,
      body: { id: user.id, status: "SUSPENDED" },
    });
    expect(expectAuthError(suspend, 400).fields).toEqual([problem]);
    expect(await stack.sql`select status from app.users where id = ${user.id}`).toEqual([{ status: "ACTIVE" }]);
  });
});
