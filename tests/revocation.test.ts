/**
 * Revocation: tokens stop working when their password is changed, their
 * account suspended or deleted. Postgres decides (app.users.token_version and
 * status, checked by the statement that opens each caller's transaction and by
 * the notes policies), so it holds across isolates. The password change runs
 * on the shared stack (PGlite or PostgreSQL); suspending and deleting need SQL,
 * as an operator would run it, so they run on a stack with a database of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiRequest, type ApiResponse, call, readResetCode, registerUser } from "./support/api.ts";
import { decodeAccessToken, expectAuthError, expectSession } from "./support/auth.ts";
import { expectNotesError, noteEnvelope, noteListEnvelope } from "./support/notes.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";

type Caller = (path: string, request?: ApiRequest) => Promise<ApiResponse>;

/** One call to each notes endpoint with `token`, all naming `noteId`. */
function everyNotesEndpoint(send: Caller, token: string, noteId: string) {
  return Promise.all([
    send("/notes-create", { token, body: { title: "after revocation" } }),
    send("/notes-fetch", { token }),
    send("/notes-save", { token, body: { id: noteId, title: "changed after revocation" } }),
    send(`/notes-delete?id=${noteId}`, { token, method: "DELETE" }),
  ]);
}

function expectAllRevoked(responses: ApiResponse[]) {
  for (const response of responses) {
    expect(expectNotesError(response, 401)).toBe("Access token revoked");
    // An app tells "log in again" from a bug by the code, not by the words.
    expect(response.body).toMatchObject({ code: "token_revoked" });
    expect(response.headers.get("www-authenticate")).toBe(
      'Bearer error="invalid_token", error_description="Access token revoked"',
    );
  }
}

async function createNoteOn(send: Caller, token: string, title: string) {
  const response = await send("/notes-create", { token, body: { title } });
  expect(response.status, response.text).toBe(201);
  return noteEnvelope.parse(response.body).data;
}

describe("setting a password with a code", () => {
  it("invalidates every token issued before it, and only those", async () => {
    const user = await registerUser("revoke-pw");
    const login = expectSession(
      await call("/auth/login", { body: { email: user.email, password: user.password } }),
      200,
    );
    const note = await createNoteOn(call, user.accessToken, "kept through the change");

    await call("/auth/request-password-reset", { body: { email: user.email } });
    const code = await readResetCode(user.email);
    const changed = expectSession(
      await call("/auth/create-password", { body: { email: user.email, password: "a brand new secret", code } }),
      200,
    );

    expectAllRevoked(await everyNotesEndpoint(call, user.accessToken, note.id));
    expectAllRevoked(await everyNotesEndpoint(call, login.accessToken, note.id));
    // The token create-password answered with, and later logins, work.
    const listing = await call("/notes-fetch", { token: changed.accessToken });
    expect(noteListEnvelope.parse(listing.body).data.notes.map((each) => each.id)).toEqual([note.id]);
    const relogin = expectSession(
      await call("/auth/login", { body: { email: user.email, password: "a brand new secret" } }),
      200,
    );
    expect((await call("/notes-fetch", { token: relogin.accessToken })).status).toBe(200);
  });
});

describe("an operator suspending or deleting an account", () => {
  let stack: ScratchStack;
  beforeAll(async () => {
    stack = await startScratchStack("revocation");
  });
  afterAll(async () => {
    await stack?.stop();
  });

  async function register(label: string) {
    return await registerUser(label, { baseUrl: stack.baseUrl });
  }

  async function notesOwnedBy(userId: string) {
    return await stack.sql<{ id: string; title: string }[]>`
      select id, title from public.notes where created_by = ${userId} order by id`;
  }

  it("suspension: login answers 403 and every earlier token 401 on every notes endpoint", async () => {
    const user = await register("suspend");
    const login = expectSession(
      await stack.call("/auth/login", { body: { email: user.email, password: user.password } }),
      200,
    );
    const note = await createNoteOn(stack.call, user.accessToken, "written before suspension");
    const before = await notesOwnedBy(user.id);

    // The statement docs/security.md documents for suspending an account.
    await stack.sql`update app.users set status = 'SUSPENDED' where email = lower(btrim(${user.email}))`;

    const refused = await stack.call("/auth/login", { body: { email: user.email, password: user.password } });
    expect(expectAuthError(refused, 403).message).toMatch(/suspended/i);
    expectAllRevoked(await everyNotesEndpoint(stack.call, user.accessToken, note.id));
    expectAllRevoked(await everyNotesEndpoint(stack.call, login.accessToken, note.id));
    expect(await notesOwnedBy(user.id)).toEqual(before);
    // Suspension ended the sessions too: they cannot be refreshed into new tokens.
    for (const refreshToken of [user.refreshToken, login.refreshToken]) {
      const refresh = await stack.call("/auth/refresh", { body: { refreshToken } });
      expect(expectAuthError(refresh, 401).code).toBe("session_revoked");
    }

    // Lifting the suspension does not bring the old tokens back: suspending raised the token version.
    await stack.sql`update app.users set status = 'ACTIVE' where id = ${user.id}`;
    expectAllRevoked(await everyNotesEndpoint(stack.call, user.accessToken, note.id));
    const fresh = expectSession(
      await stack.call("/auth/login", { body: { email: user.email, password: user.password } }),
      200,
    );
    expect((await stack.call("/notes-fetch", { token: fresh.accessToken })).status).toBe(200);
  });

  it("deletion: the user's tokens answer 401 and their notes are gone", async () => {
    const user = await register("delete");
    const other = await register("bystander");
    const note = await createNoteOn(stack.call, user.accessToken, "goes with its owner");
    await createNoteOn(stack.call, user.accessToken, "goes too");
    const kept = await createNoteOn(stack.call, other.accessToken, "stays");
    expect(await notesOwnedBy(user.id)).toHaveLength(2);

    await stack.sql`delete from app.users where id = ${user.id}`;

    expectAllRevoked(await everyNotesEndpoint(stack.call, user.accessToken, note.id));
    expect(await notesOwnedBy(user.id)).toEqual([]);
    expect(await notesOwnedBy(other.id)).toEqual([{ id: kept.id, title: "stays" }]);
  });

  it("is enforced by Postgres itself: the policies hide a revoked caller's notes even from a direct query", async () => {
    const user = await register("policy");
    await createNoteOn(stack.call, user.accessToken, "visible while active");
    const asCaller = (claims: Record<string, unknown>) =>
      stack.sql.begin(async (tx) => {
        await tx`select set_config('role', 'authenticated', true),
                        set_config('request.jwt.claims', ${JSON.stringify(claims)}, true)`;
        const [row] = await tx<{ count: number }[]>`select count(*)::int as count from public.notes`;
        return row.count;
      });
    const { session_id } = decodeAccessToken(user.accessToken).claims;
    const claims = { sub: user.id, role: "authenticated", token_version: 0, session_id };
    expect(await asCaller(claims)).toBe(1);
    // A session the token does not name, or none at all, shows nothing.
    expect(await asCaller({ ...claims, session_id: crypto.randomUUID() })).toBe(0);
    expect(await asCaller({ sub: user.id, role: "authenticated", token_version: 0 })).toBe(0);
    // A token of an older version, as after a password change; the change also ended the session.
    await stack.sql`update app.users set token_version = token_version + 1 where id = ${user.id}`;
    expect(await asCaller(claims)).toBe(0);
    expect(await asCaller({ ...claims, token_version: 1 })).toBe(0);
    const relogin = expectSession(
      await stack.call("/auth/login", { body: { email: user.email, password: user.password } }),
      200,
    );
    const current = {
      ...claims,
      token_version: 1,
      session_id: decodeAccessToken(relogin.accessToken).claims.session_id,
    };
    expect(await asCaller(current)).toBe(1);
    await stack.sql`update app.users set status = 'SUSPENDED' where id = ${user.id}`;
    expect(await asCaller({ ...current, token_version: 2 })).toBe(0);
    // And the statement that opens a caller's transaction refuses it outright, before any notes query.
    await expect(
      stack.sql.begin(async (tx) => {
        await tx`with session as (
                   select set_config('role', 'authenticated', true),
                          set_config('request.jwt.claims', ${JSON.stringify({ ...claims, token_version: 2 })}, true))
                 select app.require_active_caller() from session`;
      }),
    ).rejects.toMatchObject({ code: "PT401" });
  });
});
