/**
 * Anonymous accounts over HTTP: a visitor's account with no email and no
 * password writes notes, signs up under the same id with every note kept, is
 * refused an address that has an account with nothing lost, and is held to its
 * limits (new accounts per address, notes per account) by Postgres, through
 * the Data API too.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createNotesClient, type Session } from "../shared/index.ts";
import { anonKey, call, readMailedCode, type RegisteredUser, registerUser, uniqueEmail } from "./support/api.ts";
import { decodeAccessToken, expectAuthError, expectSession } from "./support/auth.ts";
import { openTestDatabase, type TestDatabase } from "./support/database.ts";
import { allNotes, createNote, expectNotesError, fetchNotes } from "./support/notes.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";

const password = "correct horse battery";

/** Starts an anonymous account on the shared stack (or `stack`) and returns its session. */
async function signInAnonymously(stack?: ScratchStack): Promise<Session> {
  const response = stack ? await stack.call("/auth/anonymous", { method: "POST" }) : await call("/auth/anonymous", {
    method: "POST",
  });
  return expectSession(response, 201);
}

/** The session as the notes helpers take a user. */
function asUser(session: Session): RegisteredUser {
  const { payload, accessToken, refreshToken } = session;
  return { id: payload.id, email: payload.email, password: "", accessToken, refreshToken };
}

function upgrade(session: Session, body: Record<string, unknown>) {
  return call("/auth/anonymous/upgrade", { token: session.accessToken, body });
}

describe("POST /auth/anonymous", () => {
  it("signs in a new account with no email that is anonymous in the user and the token, and writes notes", async () => {
    const session = await signInAnonymously();
    expect(session.payload).toMatchObject({ email: "", isAnonymous: true, isVerified: false, status: "ACTIVE" });
    expect(session.refreshToken).toEqual(expect.any(String));
    expect(session.deviceToken).toEqual(expect.any(String));
    expect(decodeAccessToken(session.accessToken).claims).toMatchObject({
      sub: session.payload.id,
      role: "authenticated",
      is_anonymous: true,
      amr: [{ method: "anonymous", timestamp: expect.any(Number) }],
    });
    const note = await createNote(asUser(session), { title: "before signing up", content: "kept" });
    expect(note.createdBy).toBe(session.payload.id);
    expect((await allNotes(asUser(session))).map((each) => each.id)).toEqual([note.id]);
    // Two visitors are two accounts.
    expect((await signInAnonymously()).payload.id).not.toBe(session.payload.id);
  });

  it("needs the apikey", async () => {
    expectAuthError(await call("/auth/anonymous", { method: "POST", apiKey: null }), 401);
  });
});

describe("the typed client", () => {
  it("signs in anonymously, writes a note, and signs up keeping it", async () => {
    const client = createNotesClient({ url: inject("baseUrl"), anonKey });
    const visitor = await client.auth.signInAnonymously();
    expect(visitor.payload.isAnonymous).toBe(true);
    const note = await client.notes.create({ title: "from the client" });
    const upgraded = await client.auth.upgradeAnonymous({ name: "Client", email: uniqueEmail("client"), password });
    expect(upgraded.payload).toMatchObject({ id: visitor.payload.id, isAnonymous: false });
    expect((await client.notes.get(note.id)).title).toBe("from the client");
  });
});

describe("POST /auth/anonymous/upgrade", () => {
  it("keeps the id and every note, and the anonymous session goes on as the real account", async () => {
    const anonymous = await signInAnonymously();
    const notes = [
      await createNote(asUser(anonymous), { title: "one" }),
      await createNote(asUser(anonymous), { title: "two" }),
    ];
    const email = uniqueEmail("upgrade");
    const upgraded = expectSession(await upgrade(anonymous, { name: "Ada", email, password }), 200);
    expect(upgraded.payload).toMatchObject({ id: anonymous.payload.id, email, name: "Ada", isAnonymous: false });
    expect(decodeAccessToken(upgraded.accessToken).claims).toMatchObject({
      email,
      is_anonymous: false,
      amr: [{ method: "password", timestamp: expect.any(Number) }],
    });
    // A code to verify the address is mailed, as at register.
    expect(await readMailedCode(email, { kind: "verification" })).toMatch(/^\d{6}$/);

    // The old session: its token still reads the notes, and its refresh answers the real account.
    expect((await allNotes(asUser(anonymous))).map((note) => note.id).sort()).toEqual(
      notes.map((note) => note.id).sort(),
    );
    const refreshed = expectSession(
      await call("/auth/refresh", { body: { refreshToken: anonymous.refreshToken } }),
      200,
    );
    expect(refreshed.payload).toMatchObject({ id: anonymous.payload.id, email, isAnonymous: false });

    // The account now signs in with its password, and finds its notes.
    const login = expectSession(await call("/auth/login", { body: { email, password } }), 200);
    expect(login.payload.id).toBe(anonymous.payload.id);
    expect((await allNotes(asUser(login))).map((note) => note.title).sort()).toEqual(["one", "two"]);

    // Done once: a second upgrade is refused.
    const again = await upgrade(login, { name: "Ada", email: uniqueEmail("again"), password });
    expect(expectAuthError(again, 409).code).toBe("not_anonymous");
  });

  it("refuses an address that has an account and loses nothing", async () => {
    const owner = await registerUser("taken");
    const anonymous = await signInAnonymously();
    const note = await createNote(asUser(anonymous), { title: "mine" });
    const refused = await upgrade(anonymous, { name: "Bob", email: owner.email.toUpperCase(), password });
    expect(expectAuthError(refused, 409).code).toBe("email_taken");

    const user = await call("/auth/user", { token: anonymous.accessToken });
    expect(user.status, user.text).toBe(200);
    expect(user.body).toMatchObject({ data: { payload: { id: anonymous.payload.id, email: "", isAnonymous: true } } });
    expect((await allNotes(asUser(anonymous))).map((each) => each.id)).toEqual([note.id]);
    expect(await allNotes(owner)).toEqual([]);
  });

  it("needs a signed-in caller and a sign-up's body", async () => {
    const anonymous = await signInAnonymously();
    expectAuthError(
      await call("/auth/anonymous/upgrade", { body: { name: "A", email: uniqueEmail(), password } }),
      401,
    );
    const short = await upgrade(anonymous, { name: "A", email: uniqueEmail(), password: "short" });
    expect(expectAuthError(short, 400).code).toBe("invalid_request");
  });
});

describe("signing up with an emailed code", () => {
  const sendCode = (session: Session, email: string) =>
    call("/auth/anonymous/upgrade/code", { token: session.accessToken, body: { email } });
  const verify = (session: Session, body: Record<string, unknown>) =>
    call("/auth/anonymous/upgrade/verify", { token: session.accessToken, body });
  const otherThan = (code: string) => String((Number(code) + 1) % 100_000_000).padStart(8, "0");

  it("keeps the id and every note, verifies the address, and the anonymous session goes on", async () => {
    const anonymous = await signInAnonymously();
    const notes = [
      await createNote(asUser(anonymous), { title: "one" }),
      await createNote(asUser(anonymous), { title: "two" }),
    ];
    const email = uniqueEmail("by-code");
    const sent = await sendCode(anonymous, email);
    expect(sent.status, sent.text).toBe(200);
    const code = await readMailedCode(email, { kind: "sign-in" });
    expect(code).toMatch(/^\d{8}$/);
    expect(expectAuthError(await verify(anonymous, { name: "Cy", email, code: otherThan(code) }), 400).code).toBe(
      "invalid_code",
    );
    // The code is the address's: another address with it is a wrong code.
    const elsewhere = await verify(anonymous, { name: "Cy", email: uniqueEmail("elsewhere"), code });
    expect(expectAuthError(elsewhere, 400).code).toBe("invalid_code");

    const upgraded = expectSession(await verify(anonymous, { name: "Cy", email, code }), 200);
    expect(upgraded.payload).toMatchObject({
      id: anonymous.payload.id,
      email,
      name: "Cy",
      isVerified: true,
      isAnonymous: false,
    });
    expect((await allNotes(asUser(upgraded))).map((note) => note.id).sort()).toEqual(
      notes.map((note) => note.id).sort(),
    );
    // The old session reads the notes too, and its refresh answers the real account.
    expect((await allNotes(asUser(anonymous))).map((note) => note.title).sort()).toEqual(["one", "two"]);
    const refreshed = expectSession(
      await call("/auth/refresh", { body: { refreshToken: anonymous.refreshToken } }),
      200,
    );
    expect(refreshed.payload).toMatchObject({ id: anonymous.payload.id, email, isAnonymous: false });
    // Done once.
    expect(expectAuthError(await verify(anonymous, { name: "Cy", email, code }), 409).code).toBe("not_anonymous");
    // A sign-in code now signs in to the account it became.
    expect((await call("/auth/otp", { body: { email } })).status).toBe(200);
    const signInCode = await readMailedCode(email, { kind: "sign-in", after: 1 });
    const signedIn = expectSession(await call("/auth/otp/verify", { body: { email, code: signInCode } }), 200);
    expect(signedIn.payload.id).toBe(anonymous.payload.id);
  });

  it("refuses an address that has an account, mailing nothing and losing nothing", async () => {
    const owner = await registerUser("code-taken");
    const anonymous = await signInAnonymously();
    const note = await createNote(asUser(anonymous), { title: "mine" });
    expect(expectAuthError(await sendCode(anonymous, owner.email.toUpperCase()), 409).code).toBe("email_taken");
    const user = await call("/auth/user", { token: anonymous.accessToken });
    expect(user.body).toMatchObject({ data: { payload: { id: anonymous.payload.id, isAnonymous: true } } });
    expect((await allNotes(asUser(anonymous))).map((each) => each.id)).toEqual([note.id]);
  });

  it("refuses an address registered after the code was mailed, and the account stays as it was", async () => {
    const anonymous = await signInAnonymously();
    const note = await createNote(asUser(anonymous), { title: "still mine" });
    const email = uniqueEmail("code-raced");
    expect((await sendCode(anonymous, email)).status).toBe(200);
    const code = await readMailedCode(email, { kind: "sign-in" });
    const registered = await call("/auth/register", { body: { name: "First", email, password } });
    expect(registered.status, registered.text).toBe(201);
    expect(expectAuthError(await verify(anonymous, { name: "Late", email, code }), 409).code).toBe("email_taken");
    expect((await allNotes(asUser(anonymous))).map((each) => each.id)).toEqual([note.id]);
    const user = await call("/auth/user", { token: anonymous.accessToken });
    expect(user.body).toMatchObject({ data: { payload: { email: "", isAnonymous: true } } });
  });

  it("is the anonymous account's alone, and needs its token", async () => {
    const real = await registerUser("code-real");
    const asReal = { ...real, payload: { id: real.id } } as unknown as Session;
    expect(expectAuthError(await sendCode(asReal, uniqueEmail("code-real-new")), 409).code).toBe("not_anonymous");
    const unsigned = await call("/auth/anonymous/upgrade/code", { body: { email: uniqueEmail() } });
    expectAuthError(unsigned, 401);
  });
});

describe("what an anonymous account cannot add", () => {
  it("refuses a second factor and a passkey with sign_up_required, and allows them once signed up", async () => {
    const anonymous = await signInAnonymously();
    const attempts = [
      ["/auth/mfa/enroll", { password }],
      ["/auth/passkeys/register/options", {}],
      ["/auth/passkeys/register", {}],
    ] as const;
    for (const [path, body] of attempts) {
      const refused = await call(path, { token: anonymous.accessToken, body });
      expect(expectAuthError(refused, 403).code, path).toBe("sign_up_required");
    }
    const email = uniqueEmail("factor");
    const upgraded = expectSession(await upgrade(anonymous, { name: "F", email, password }), 200);
    // Enrolling needs a verified address, as for any account.
    const code = await readMailedCode(email, { kind: "verification" });
    expect((await call("/auth/verify-email", { body: { email, code, password } })).status).toBe(200);
    const enrolled = await call("/auth/mfa/enroll", { token: upgraded.accessToken, body: { password } });
    expect(enrolled.status, enrolled.text).toBe(201);
  });
});

describe("REQUIRE_EMAIL_VERIFICATION=true", () => {
  let gated: ScratchStack;

  beforeAll(async () => {
    gated = await startScratchStack("anonymous_gated", { env: { REQUIRE_EMAIL_VERIFICATION: "true" } });
  });

  afterAll(async () => {
    await gated?.stop();
  });

  /** How many notes the token reaches as role authenticated, as the Data API would use it. */
  async function reachedOnDataApi(token: string): Promise<unknown> {
    const claims = JSON.stringify(decodeAccessToken(token).claims);
    // One simple query, so nothing of the stack's runs on PGlite's single session in between.
    const connection = await gated.sql.reserve();
    try {
      const results = await connection.unsafe(`
        begin;
        set local role authenticated;
        select set_config('request.jwt.claims', $claims$${claims}$claims$, true);
        select count(*)::int as reached from public.notes;
        rollback;`).simple();
      const rows = (results as unknown as Record<string, unknown>[][]).flat();
      return rows.find((row) => "reached" in row)?.reached;
    } finally {
      connection.release();
    }
  }

  it("lets an anonymous account write notes, and holds it to the rule once it signs up, until it verifies", async () => {
    const anonymous = await signInAnonymously(gated);
    const create = (title: string) => gated.call("/notes-create", { token: anonymous.accessToken, body: { title } });
    const first = await create("no address to verify");
    expect(first.status, first.text).toBe(201);
    expect((await gated.call("/notes-fetch", { token: anonymous.accessToken })).status).toBe(200);
    expect(await reachedOnDataApi(anonymous.accessToken)).toBe(1);

    const email = uniqueEmail("gated");
    const upgraded = expectSession(
      await gated.call("/auth/anonymous/upgrade", {
        token: anonymous.accessToken,
        body: { name: "G", email, password },
      }),
      200,
    );
    // Signed up, unverified: as a new account is, on every route, for the old session and the new one.
    for (const token of [anonymous.accessToken, upgraded.accessToken]) {
      const refused = await gated.call("/notes-create", { token, body: { title: "too soon" } });
      expectNotesError(refused, 403);
      expect(refused.body).toMatchObject({ code: "email_not_verified" });
      expect(await reachedOnDataApi(token)).toBe(0);
    }

    const code = await readMailedCode(email, { kind: "verification", logFile: gated.logFile });
    const verified = await gated.call("/auth/verify-email", { body: { email, code, password } });
    expect(verified.status, verified.text).toBe(200);
    expect((await create("verified")).status).toBe(201);
    expect(await reachedOnDataApi(upgraded.accessToken)).toBe(2);
  });
});

describe("POST /auth/anonymous/merge", () => {
  function merge(owner: RegisteredUser, anonymous: Session) {
    return call("/auth/anonymous/merge", {
      token: owner.accessToken,
      body: { anonymousAccessToken: anonymous.accessToken },
    });
  }

  it("moves every note into the signed-in account once, also when retried, and deletes the anonymous one", async () => {
    const owner = await registerUser("merge");
    const kept = await createNote(owner, { title: "owner's own" });
    const ownerCursor = await call("/notes-changes", { token: owner.accessToken }).then((r) =>
      (r.body as { data: { cursor: string } }).data.cursor
    );
    const anonymous = await signInAnonymously();
    const moving = [
      await createNote(asUser(anonymous), { title: "draft one" }),
      await createNote(asUser(anonymous), { title: "draft two", status: "PUBLISHED" }),
    ];
    // The upgrade to the owner's address is refused; the app signs in there and merges instead.
    expect(expectAuthError(await upgrade(anonymous, { name: "A", email: owner.email, password }), 409).code).toBe(
      "email_taken",
    );

    const merged = await merge(owner, anonymous);
    expect(merged.status, merged.text).toBe(200);
    expect(merged.body).toMatchObject({ data: { moved: 2 } });
    const again = await merge(owner, anonymous);
    expect(again.status, again.text).toBe(200);
    expect(again.body).toMatchObject({ data: { moved: 0 } });

    const notes = await fetchNotes(owner, "limit=100");
    expect(notes.notes.map((note) => note.id).sort()).toEqual([kept.id, ...moving.map((note) => note.id)].sort());
    expect(notes.notes.every((note) => note.createdBy === owner.id)).toBe(true);
    expect(notes.pagination.total).toBe(3);
    expect((await fetchNotes(owner, "status=PUBLISHED")).pagination.total).toBe(1);
    expect((await fetchNotes(owner, "q=draft")).notes).toHaveLength(2);
    // The owner's feed shows each moved note once, as new, after the cursor taken before.
    const feed = await call(`/notes-changes?since=${ownerCursor}`, { token: owner.accessToken });
    const changes = (feed.body as { data: { changes: { id: string }[] } }).data.changes;
    expect(changes.map((change) => change.id).sort()).toEqual(moving.map((note) => note.id).sort());
    // The anonymous account is gone with its session.
    expect((await call("/notes-fetch", { token: anonymous.accessToken })).status).toBe(401);
  });

  it("moves the notes into an account that has none yet", async () => {
    const owner = await registerUser("merge-empty");
    const anonymous = await signInAnonymously();
    const note = await createNote(asUser(anonymous), { title: "first of the owner's" });
    const merged = await merge(owner, anonymous);
    expect(merged.status, merged.text).toBe(200);
    expect(merged.body).toMatchObject({ data: { moved: 1 } });
    const notes = await fetchNotes(owner);
    expect(notes.notes.map((each) => each.id)).toEqual([note.id]);
    expect(notes.pagination.total).toBe(1);
  });

  it("refuses a caller that is anonymous itself, so no merge passes the note cap, and moves nothing", async () => {
    const visitor = await signInAnonymously();
    const other = await signInAnonymously();
    await createNote(asUser(other), { title: "stays put" });
    const refused = await call("/auth/anonymous/merge", {
      token: visitor.accessToken,
      body: { anonymousAccessToken: other.accessToken },
    });
    expect(expectAuthError(refused, 403).code).toBe("sign_up_required");
    expect((await allNotes(asUser(other))).map((note) => note.title)).toEqual(["stays put"]);
    expect(await allNotes(asUser(visitor))).toEqual([]);
  });

  it("refuses a token that is not an anonymous account's", async () => {
    const owner = await registerUser("merge-real");
    const other = await registerUser("merge-other");
    const refused = await call("/auth/anonymous/merge", {
      token: owner.accessToken,
      body: { anonymousAccessToken: other.accessToken },
    });
    expect(expectAuthError(refused, 409).code).toBe("not_anonymous");
    const self = await call("/auth/anonymous/merge", {
      token: owner.accessToken,
      body: { anonymousAccessToken: owner.accessToken },
    });
    expect(expectAuthError(self, 409).code).toBe("not_anonymous");
  });
});

describe("the limits of anonymous accounts", () => {
  let stack: ScratchStack;

  beforeAll(async () => {
    stack = await startScratchStack("anonymous_limits", {
      env: { ANONYMOUS_MAX_PER_ADDRESS: "2", ANONYMOUS_NOTE_LIMIT: "2" },
    });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it("starts at most ANONYMOUS_MAX_PER_ADDRESS accounts from one address in its window", async () => {
    await signInAnonymously(stack);
    await signInAnonymously(stack);
    const refused = await stack.call("/auth/anonymous", { method: "POST" });
    expect(expectAuthError(refused, 429).code).toBe("rate_limited");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    // Sign-ups from that address are counted apart.
    const registered = await stack.call("/auth/register", { body: { name: "R", email: uniqueEmail(), password } });
    expect(registered.status, registered.text).toBe(201);
  });

  it("refuses the note past ANONYMOUS_NOTE_LIMIT with sign_up_required, and lifts it once signed up", async () => {
    await stack.sql`delete from app.rate_limits where bucket = 'anonymous-address'`;
    const [stored] = await stack.sql<{ limit: number }[]>`select anonymous_note_limit as limit from app.settings`;
    expect(stored.limit).toBe(2);
    const session = await signInAnonymously(stack);
    const create = (title: string) => stack.call("/notes-create", { token: session.accessToken, body: { title } });
    expect((await create("1")).status).toBe(201);
    expect((await create("2")).status).toBe(201);
    const refused = await create("3");
    expectNotesError(refused, 403);
    expect(refused.body).toMatchObject({ code: "sign_up_required" });
    const [{ notes }] = await stack.sql`select notes from app.note_counts where user_id = ${session.payload.id}`;
    expect(notes).toBe(2);

    const email = uniqueEmail("lifted");
    const upgraded = await stack.call("/auth/anonymous/upgrade", {
      token: session.accessToken,
      body: { name: "L", email, password },
    });
    expect(upgraded.status, upgraded.text).toBe(200);
    expect((await create("3")).status).toBe(201);
  });

  it("deletes an anonymous account unused for ANONYMOUS_TTL_DAYS with its notes, and nothing else", async () => {
    await stack.sql`delete from app.rate_limits where bucket = 'anonymous-address'`;
    const expired = await signInAnonymously(stack);
    const fresh = await signInAnonymously(stack);
    await stack.sql`delete from app.rate_limits where bucket = 'anonymous-address'`;
    const refreshedLately = await signInAnonymously(stack);
    const real = await stack.call("/auth/register", { body: { name: "Old", email: uniqueEmail("old"), password } });
    const realId = expectSession(real, 201).payload.id;
    for (const session of [expired, fresh, refreshedLately]) {
      const made = await stack.call("/notes-create", { token: session.accessToken, body: { title: "kept?" } });
      expect(made.status, made.text).toBe(201);
    }
    // 31 days pass for three of them; one anonymous account's session was refreshed yesterday.
    // In one transaction: the schedule runs beside the test, and must never see the refreshed one 31 days old.
    const aged = [expired.payload.id, refreshedLately.payload.id, realId];
    await stack.sql.begin(async (sql) => {
      await sql`update app.users set created_at = now() - interval '31 days' where id = any(${aged})`;
      await sql`update app.sessions set created_at = now() - interval '31 days',
                  refreshed_at = now() - interval '31 days' where user_id = any(${aged})`;
      await sql`update app.sessions set refreshed_at = now() - interval '1 day'
                  where user_id = ${refreshedLately.payload.id}`;
    });

    // The stack's schedule (its mail loop) deletes the unused one.
    let left: readonly unknown[] = [];
    for (let attempt = 0; attempt < 100; attempt++) {
      left = await stack.sql`select 1 from app.users where id = ${expired.payload.id}`;
      if (left.length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(left).toHaveLength(0);
    expect(await stack.sql`select 1 from public.notes where created_by = ${expired.payload.id}`).toHaveLength(0);
    const others = [fresh.payload.id, refreshedLately.payload.id, realId];
    expect(await stack.sql`select id from app.users where id = any(${others})`).toHaveLength(3);
    expect(await stack.sql`select 1 from public.notes where created_by = any(${others})`).toHaveLength(2);
  });
});

describe("the note cap through the Data API", () => {
  let database: TestDatabase;
  const visitor = randomUUID();
  let sessionId: string;

  beforeAll(async () => {
    database = await openTestDatabase();
    await database.query("insert into app.users (id, name, is_anonymous) values ($1, 'Anonymous', true)", [visitor]);
    const [session] = await database.query<{ id: string }>(
      "insert into app.sessions (user_id, expires_at) values ($1, now() + interval '1 hour') returning id",
      [visitor],
    );
    sessionId = session.id;
  });

  afterAll(async () => {
    await database?.query("delete from app.users where id = $1", [visitor]);
    await database?.close();
  });

  it("refuses an anonymous user's insert past 100 notes with the token's claims, and counts 100", async () => {
    const outcome = await database.rolledBack(async (query) => {
      await query("set local role authenticated");
      const claims = { sub: visitor, role: "authenticated", session_id: sessionId, is_anonymous: false };
      await query("select set_config('request.jwt.claims', $1, true)", [JSON.stringify(claims)]);
      await query(
        "insert into public.notes (created_by, title) select $1::uuid, 'n' || i from generate_series(1, 100) i",
        [visitor],
      );
      const refused = await query("insert into public.notes (created_by, title) values ($1, 'one too many')", [visitor])
        .then(() => undefined, (error: { code?: string; message?: string }) => error);
      return { refused };
    });
    expect(outcome.refused).toMatchObject({ code: "PT403", message: "anonymous_note_limit" });
  });
});
