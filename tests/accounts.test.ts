/**
 * Accounts people manage themselves: the address verified with the code
 * mailed at sign-up, a new code on request, the verification gate, a password
 * change while signed in, and deleting the account with everything it owns.
 * On stacks of their own whose database the tests read with SQL, to move a
 * code's clock as time would and to look for what deletion leaves behind.
 */
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiResponse, countResetMails, readMailedCode, readResetCode, uniqueEmail } from "./support/api.ts";
import { decodeAccessToken, expectAuthError, expectSession } from "./support/auth.ts";
import { expectNotesError } from "./support/notes.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";

const password = "correct horse battery";
// Cheap hashes, and room for many logins from one address; the per-(email, address) failure limit stays 5.
const env = { BCRYPT_COST: "4", LOGIN_MAX_ATTEMPTS_PER_ADDRESS: "1000000", VERIFY_MAX_PER_ADDRESS: "1000000" };

let stack: ScratchStack;
let gated: ScratchStack;

beforeAll(async () => {
  [stack, gated] = await Promise.all([
    startScratchStack("accounts", { env }),
    startScratchStack("accounts_gated", { env: { ...env, REQUIRE_EMAIL_VERIFICATION: "true" } }),
  ]);
});

afterAll(async () => {
  await Promise.all([stack?.stop(), gated?.stop()]);
});

async function signUp(on: ScratchStack = stack, label = "account") {
  const email = uniqueEmail(label);
  const session = expectSession(await on.call("/auth/register", { body: { name: label, email, password } }), 201);
  return { email, ...session };
}

function verificationCode(email: string, on: ScratchStack = stack, after = 0): Promise<string> {
  return readMailedCode(email, { kind: "verification", after, logFile: on.logFile });
}

/** Verifies with the code and the account's password: a code alone proves the mailbox, not the account. */
function verify(email: string, code: string, on: ScratchStack = stack): Promise<ApiResponse> {
  return on.call("/auth/verify-email", { body: { email, code, password } });
}

function mailsOf(email: string, on: ScratchStack = stack): number {
  return countResetMails(email, on.logFile, "verification");
}

/** Waits until the stack has printed `count` verification mails to `email`, or fails. */
async function expectMails(email: string, count: number) {
  await verificationCode(email, stack, count - 1);
  // Nothing more arrives: the drain runs every 250 ms.
  await new Promise((resolve) => setTimeout(resolve, 600));
  expect(mailsOf(email)).toBe(count);
}

function otherCode(code: string): string {
  return code === "000000" ? "111111" : "000000";
}

describe("verifying the address", () => {
  it("takes the code mailed at sign-up, and answers like login with isVerified true", async () => {
    const user = await signUp();
    expect(user.payload.isVerified).toBe(false);
    const code = await verificationCode(user.email);
    const verified = expectSession(await verify(user.email, code), 200);
    expect(verified.payload).toMatchObject({ id: user.payload.id, isVerified: true });
    expect((await stack.call("/notes-fetch", { token: verified.accessToken })).status).toBe(200);
    const current = await stack.call("/auth/user", { token: user.accessToken });
    expect(current.body).toMatchObject({ data: { payload: { isVerified: true } } });
  });

  it("stores the code only as an HMAC, which a copy of the database cannot be searched for", async () => {
    const user = await signUp();
    const code = await verificationCode(user.email);
    const [stored] = await stack.sql<{ code_hash: string }[]>`
      select code_hash from app.email_verification_codes where user_id = ${user.payload.id}`;
    expect(stored.code_hash).toMatch(/^[0-9a-f]{64}$/);
    // Not the code, nor an unkeyed hash of it or of address and code.
    const digest = async (text: string) =>
      Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))).toString("hex");
    for (const guess of [code, await digest(code), await digest(`${user.email}\n${code}`)]) {
      expect(stored.code_hash).not.toBe(guess);
    }
  });

  it("answers the same 400 for a wrong, unknown, used, burned or expired code, and changes nothing", async () => {
    const answers: ApiResponse[] = [];
    const wrong = await signUp();
    const wrongCode = await verificationCode(wrong.email);
    answers.push(await verify(wrong.email, otherCode(wrongCode)));
    // An unknown address has no password to match: as a wrong password at login.
    expect(expectAuthError(await verify(uniqueEmail("nobody"), wrongCode), 401).code).toBe("invalid_credentials");

    const used = await signUp();
    const usedCode = await verificationCode(used.email);
    expectSession(await verify(used.email, usedCode), 200);
    answers.push(await verify(used.email, usedCode));

    const burned = await signUp();
    const burnedCode = await verificationCode(burned.email);
    for (let attempt = 0; attempt < 5; attempt++) answers.push(await verify(burned.email, otherCode(burnedCode)));
    answers.push(await verify(burned.email, burnedCode));

    const expired = await signUp();
    const expiredCode = await verificationCode(expired.email);
    await stack.sql`update app.email_verification_codes set expires_at = now() - interval '1 second'
                    where user_id = ${expired.payload.id}`;
    answers.push(await verify(expired.email, expiredCode));

    for (const answer of answers) {
      expect(answer.status, answer.text).toBe(400);
      expect(answer.body).toEqual({
        statusCode: 400,
        message: "Invalid or expired code",
        code: "invalid_code",
        fields: [{ field: "code", message: "Invalid or expired code" }],
      });
    }
    const flags = await stack.sql<{ is_verified: boolean }[]>`
      select is_verified from app.users where id in ${stack.sql([wrong, burned, expired].map((u) => u.payload.id))}`;
    expect(flags.map((row) => row.is_verified)).toEqual([false, false, false]);
    // The wrong code cost one of its five tries; the right one still works.
    expectSession(await verify(wrong.email, wrongCode), 200);
  });

  it("answers 400 naming the field for a code that is not 6 digits", async () => {
    const error = expectAuthError(await verify(uniqueEmail(), "12345"), 400);
    expect(error.fields).toEqual([{ field: "code", message: "code must be 6 digits" }]);
  });
});

describe("POST /auth/resend-verification", () => {
  const resend = (email: string) => stack.call("/auth/resend-verification", { body: { email } });
  /** Moves the last mail a minute into the past, as waiting would. */
  const aMinuteLater = (userId: string) =>
    stack.sql`update app.email_verification_codes set sent_at = sent_at - interval '61 seconds'
              where user_id = ${userId}`;

  it("mails a new code at most once a minute, and the new code replaces the old", async () => {
    const user = await signUp();
    const first = await verificationCode(user.email);
    const again = await resend(user.email);
    expect(again.status, again.text).toBe(200);
    await expectMails(user.email, 1);

    await aMinuteLater(user.payload.id);
    expect((await resend(user.email)).body).toEqual(again.body);
    const second = await verificationCode(user.email, stack, 1);
    if (second !== first) expectAuthError(await verify(user.email, first), 400);
    expectSession(await verify(user.email, second), 200);
  });

  it("mails at most 5 a day, the sign-up's included", async () => {
    const user = await signUp();
    for (let resent = 0; resent < 6; resent++) {
      await aMinuteLater(user.payload.id);
      expect((await resend(user.email)).status).toBe(200);
    }
    await expectMails(user.email, 5);
    await stack.sql`update app.email_verification_codes set day_started_at = day_started_at - interval '1 day',
                    sent_at = sent_at - interval '61 seconds' where user_id = ${user.payload.id}`;
    await resend(user.email);
    await expectMails(user.email, 6);
  });

  it("answers the same 200 for a verified and an unknown address, and mails neither", async () => {
    const user = await signUp();
    const known = await resend(user.email);
    expectSession(await verify(user.email, await verificationCode(user.email)), 200);
    await aMinuteLater(user.payload.id);
    const verified = await resend(user.email);
    const unknownEmail = uniqueEmail("nobody");
    const unknown = await resend(unknownEmail);
    for (const answer of [verified, unknown]) {
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual(known.body);
    }
    await expectMails(user.email, 1);
    expect(mailsOf(unknownEmail)).toBe(0);
  });

  it("limits verification calls per client address", async () => {
    const limited = await startScratchStack("accounts_limited", { env: { VERIFY_MAX_PER_ADDRESS: "2" } });
    try {
      const email = uniqueEmail();
      for (const path of ["/auth/resend-verification", "/auth/verify-email"]) {
        expect((await limited.call(path, { body: { email, code: "123456", password } })).status).toBe(
          path.endsWith("email") ? 401 : 200,
        );
      }
      const refused = await limited.call("/auth/verify-email", { body: { email, code: "123456", password } });
      expect(expectAuthError(refused, 429).message).toBe("Too many verification attempts; try again later");
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    } finally {
      await limited.stop();
    }
  });
});

describe("REQUIRE_EMAIL_VERIFICATION=true", () => {
  it("lets an unverified user register and log in, but answers notes calls 403 until the address is verified", async () => {
    const user = await signUp(gated);
    const refused = await gated.call("/notes-create", { token: user.accessToken, body: { title: "too soon" } });
    expect(expectNotesError(refused, 403)).toBe("Email address not verified");
    expect(refused.body).toMatchObject({ code: "email_not_verified" });
    expect((await gated.call("/notes-fetch", { token: user.accessToken })).status).toBe(403);
    // The account itself is usable: the app can say "check your inbox".
    expect((await gated.call("/auth/user", { token: user.accessToken })).status).toBe(200);
    expectSession(await gated.call("/auth/login", { body: { email: user.email, password } }), 200);

    expectSession(await verify(user.email, await verificationCode(user.email, gated), gated), 200);
    // Checked in Postgres on every request, so the token issued before verification works now too.
    expect((await gated.call("/notes-create", { token: user.accessToken, body: { title: "now" } })).status).toBe(201);
  });

  it("is written into the database, whose policies refuse the unverified user's token on any route", async () => {
    const user = await signUp(gated);
    /** What the token reaches as role authenticated, as the Data API would use it, after one note of theirs exists. */
    const reachedOn = async (on: ScratchStack, token: string, owner: string) => {
      await on.sql`insert into public.notes (created_by, title) values (${owner}, 'planted by the owner')`;
      const claims = JSON.stringify(decodeJwt(token.replace(/^Bearer /, "")));
      // One simple query, so nothing of the stack's runs on PGlite's single session in between.
      const connection = await on.sql.reserve();
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
    };
    const [stored] = await gated.sql<{ required: boolean }[]>`
      select require_email_verification as required from app.settings`;
    expect(stored.required).toBe(true);
    expect(await reachedOn(gated, user.accessToken, user.payload.id)).toBe(0);

    const ungated = await signUp();
    const [free] = await stack.sql<{ required: boolean }[]>`
      select require_email_verification as required from app.settings`;
    expect(free.required).toBe(false);
    expect(await reachedOn(stack, ungated.accessToken, ungated.payload.id)).toBe(1);
  });

  it("does not gate a stack without the setting", async () => {
    const user = await signUp();
    expect((await stack.call("/notes-create", { token: user.accessToken, body: { title: "fine" } })).status).toBe(201);
  });
});

describe("POST /auth/change-password", () => {
  const change = (token: string, body: unknown) => stack.call("/auth/change-password", { token, body });

  it("answers a fresh session and ends every other session and token of the account", async () => {
    const user = await signUp();
    const phone = expectSession(await stack.call("/auth/login", { body: { email: user.email, password } }), 200);
    const changed = expectSession(
      await change(user.accessToken, { currentPassword: password, newPassword: "a brand new passphrase" }),
      200,
    );
    expect(changed.payload.id).toBe(user.payload.id);
    for (const old of [user, phone]) {
      const refused = await stack.call("/notes-fetch", { token: old.accessToken });
      expect(refused.status).toBe(401);
      expect(refused.body).toMatchObject({ code: "token_revoked" });
      const refresh = await stack.call("/auth/refresh", { body: { refreshToken: old.refreshToken } });
      expect(expectAuthError(refresh, 401).code).toBe("session_revoked");
    }
    expect((await stack.call("/notes-fetch", { token: changed.accessToken })).status).toBe(200);
    expectAuthError(await stack.call("/auth/login", { body: { email: user.email, password } }), 401);
    expectSession(
      await stack.call("/auth/login", { body: { email: user.email, password: "a brand new passphrase" } }),
      200,
    );
  });

  it("refuses a wrong current password with 401, changing nothing, and counts it toward the session's limit", async () => {
    const user = await signUp();
    for (let guess = 0; guess < 5; guess++) {
      const wrong = await change(user.accessToken, {
        currentPassword: `guess ${guess}!`,
        newPassword: "whatever it is",
      });
      expect(expectAuthError(wrong, 401)).toMatchObject({
        message: "Password is incorrect",
        code: "invalid_credentials",
      });
    }
    const limited = await change(user.accessToken, { currentPassword: password, newPassword: "whatever it is" });
    expect(expectAuthError(limited, 429).message).toBe("Too many login attempts; try again later");
    // Nothing changed: the session lives on, and the old password is still the one (from another address).
    expect((await stack.call("/notes-fetch", { token: user.accessToken })).status).toBe(200);
    const [{ matches }] = await stack.sql<{ matches: boolean }[]>`
      select password_hash = extensions.crypt(${password}, password_hash) as matches from app.users
      where id = ${user.payload.id}`;
    expect(matches).toBe(true);
  });

  it("answers 400 naming newPassword outside 8 to 72 bytes, and 401 without a token", async () => {
    const user = await signUp();
    for (const newPassword of ["short", "é".repeat(37)]) {
      const error = expectAuthError(await change(user.accessToken, { currentPassword: password, newPassword }), 400);
      expect(error.fields?.map((problem) => problem.field)).toEqual(["newPassword"]);
    }
    const anonymous = await stack.call("/auth/change-password", {
      body: { currentPassword: password, newPassword: "x".repeat(9) },
    });
    expect(expectAuthError(anonymous, 401).code).toBe("token_missing");
  });
});

describe("POST /auth/delete-account", () => {
  /** Every row of every table of the app and public schemas that mentions `id` or `email`, as `table: row`. */
  async function rowsMentioning(id: string, email: string): Promise<string[]> {
    const tables = await stack.sql<{ name: string }[]>`
      select format('%I.%I', table_schema, table_name) as name from information_schema.tables
      where table_schema in ('app', 'public') and table_type = 'BASE TABLE'`;
    const found: string[] = [];
    for (const { name } of tables) {
      const rows = await stack.sql.unsafe(
        `select t::text as row from ${name} t where t::text ilike '%' || $1 || '%' or t::text ilike '%' || $2 || '%'`,
        [id, email],
        // On PGlite the stack shares the one session, and its statements would replace an unnamed one mid-query.
        { prepare: stack.embedded },
      );
      found.push(...rows.map(({ row }) => `${name}: ${row}`));
    }
    return found;
  }

  /** A user with something in every table that can hold their id or address. */
  async function userWithHistory() {
    const user = await signUp();
    await stack.call("/notes-create", { token: user.accessToken, body: { title: "mine" } });
    const gone = await stack.call("/notes-create", {
      token: user.accessToken,
      body: { title: "deleted, a tombstone" },
    });
    await stack.call(`/notes-delete?id=${(gone.body as { data: { id: string } }).data.id}`, {
      token: user.accessToken,
      method: "DELETE",
    });
    await stack.call("/notes-create", {
      token: user.accessToken,
      body: { title: "keyed" },
      headers: { "Idempotency-Key": `key-${user.payload.id}` },
    });
    await stack.call("/auth/login", { body: { email: user.email, password: "a wrong password" } });
    await stack.call("/auth/request-password-reset", { body: { email: user.email } });
    await readResetCode(user.email, 0, stack.logFile);
    await stack.call("/auth/create-password", { body: { email: user.email, password, code: "000000" } });
    return user;
  }

  it("removes every row that holds the address or the id, refuses the token, and frees the address", async () => {
    const user = await userWithHistory();
    const before = await rowsMentioning(user.payload.id, user.email);
    for (
      const table of [
        "app.users",
        "public.notes",
        "app.sessions",
        "app.email_verification_codes",
        "app.password_reset_codes",
        "app.mail_outbox",
        "app.rate_limits",
        "app.note_create_keys",
        "public.note_tombstones",
        "app.security_events",
      ]
    ) {
      expect(before.some((row) => row.startsWith(`${table}: `)), `${table} has the user's rows before`).toBe(true);
    }
    const deleted = await stack.call("/auth/delete-account", { token: user.accessToken, body: { password } });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toMatchObject({ success: true, data: { id: user.payload.id } });
    // The security log alone keeps the id, never the address, until its retention ends: the deletion is on record.
    const left = await rowsMentioning(user.payload.id, user.email);
    expect(left.filter((row) => !row.startsWith("app.security_events: "))).toEqual([]);
    expect(left.filter((row) => row.includes(user.email))).toEqual([]);
    expect(left.some((row) => row.includes("account_deleted"))).toBe(true);
    // Of the devices it used, the log keeps nothing: no address, no user agent, no details.
    const events = await stack.sql<
      { type: string; address: string | null; user_agent: string | null; details: object }[]
    >`
      select type, address, user_agent, details from app.security_events where user_id = ${user.payload.id}`;
    expect(events.map((event) => event.type)).toEqual(expect.arrayContaining(["session_started", "login_failed"]));
    expect(events.filter((event) => event.address !== null || event.user_agent !== null)).toEqual([]);
    expect(events.filter((event) => Object.keys(event.details).length > 0)).toEqual([]);

    const refused = await stack.call("/notes-fetch", { token: user.accessToken });
    expect(refused.body).toMatchObject({ code: "token_revoked" });
    expectAuthError(await stack.call("/auth/login", { body: { email: user.email, password } }), 401);
    const again = expectSession(
      await stack.call("/auth/register", { body: { name: "Again", email: user.email, password } }),
      201,
    );
    expect(again.payload.id).not.toBe(user.payload.id);
    const notes = await stack.call("/notes-fetch", { token: again.accessToken });
    expect(notes.body).toMatchObject({ data: { notes: [], pagination: { total: 0 } } });
  });

  it("deletes nothing for a wrong password, answering 401, and counts it toward the session's limit", async () => {
    const user = await userWithHistory();
    const before = await rowsMentioning(user.payload.id, user.email);
    const wrong = await stack.call("/auth/delete-account", {
      token: user.accessToken,
      body: { password: "not it at all" },
    });
    expect(expectAuthError(wrong, 401).code).toBe("invalid_credentials");
    expect((await rowsMentioning(user.payload.id, user.email)).length).toBeGreaterThanOrEqual(before.length);
    expect((await stack.call("/notes-fetch", { token: user.accessToken })).status).toBe(200);
    const [{ hits }] = await stack.sql<{ hits: number }[]>`
      select coalesce(sum(hits), 0)::int as hits from app.rate_limits
      where bucket = 'reentry-session' and key = ${String(decodeAccessToken(user.accessToken).claims.session_id)}`;
    expect(hits).toBe(1);
  });

  it("needs the token and the password", async () => {
    const user = await signUp();
    expect(expectAuthError(await stack.call("/auth/delete-account", { body: { password } }), 401).code).toBe(
      "token_missing",
    );
    const missing = expectAuthError(
      await stack.call("/auth/delete-account", { token: user.accessToken, body: {} }),
      400,
    );
    expect(missing.fields).toEqual([{ field: "password", message: "password is required" }]);
  });
});
