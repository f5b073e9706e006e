/**
 * The second factor as a user and an attacker meet it: enrolling an
 * authenticator (TOTP) with the password, activating it with a first code,
 * the second step of every sign-in, recovery codes, and what a session that
 * has not made the second step can reach: through the functions, and through
 * row-level security with the same token's claims. Codes are made as an
 * authenticator app makes them, from the secret enrolment answered. On a stack
 * of its own that trusts `x-forwarded-for`, so guesses can come from many
 * addresses.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activation, enrollment, factorList, recovery } from "../supabase/functions/_shared/contract/mod.ts";
import {
  awayFromStepEdge,
  codeOf,
  type Enrolled,
  enrolledAccount as enrolledSetUp,
  verifyAddress,
} from "./support/second-factor.ts";
import { freshAddress, readResetCode, uniqueEmail } from "./support/api.ts";
import { decodeAccessToken, expectSession } from "./support/auth.ts";
import { expectErrorCode } from "./support/error-codes.ts";
import { grantAdmin, runAdminCommand } from "./support/admin.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";

let stack: ScratchStack;

beforeAll(async () => {
  stack = await startScratchStack("second_factor", {
    env: { BCRYPT_COST: "4", TRUST_PROXY: "true", RESET_MAIL_MIN_INTERVAL_SECONDS: "0" },
  });
});

afterAll(async () => {
  await stack?.stop();
});

const password = "correct horse battery";
function post(path: string, body: unknown, token?: string, address = freshAddress()) {
  return stack.call(path, { body, token, headers: { "x-forwarded-for": address } });
}

function get(path: string, token: string) {
  return stack.call(path, { token, headers: { "x-forwarded-for": freshAddress() } });
}

function login(email: string) {
  return post("/auth/login", { email, password });
}

/** Enrolled with the suite's password, on its stack. */
const enrolledAccount = (label: string): Promise<Enrolled> => enrolledSetUp(stack, label, password);

/** Lets the factor accept any step again, as if its last accepted step were long past. */
async function forgetLastStep(factorId: string) {
  await stack.sql`update app.second_factors set last_step = null where id = ${factorId}`;
}

/** Signs in with the password: an aal1 session that must make the second step. */
async function firstStep(email: string) {
  const session = expectSession(await login(email), 200);
  expect(session.mfaRequired).toBe(true);
  return session;
}

describe("enrolment", () => {
  it("needs the password: none is 400, a wrong one 401, and no factor is made", async () => {
    const email = uniqueEmail("enrol");
    const { accessToken, payload } = expectSession(await post("/auth/register", { name: "E", email, password }), 201);
    expectErrorCode(await post("/auth/mfa/enroll", {}, accessToken), "invalid_request");
    expectErrorCode(
      await post("/auth/mfa/enroll", { password: "not the password" }, accessToken),
      "invalid_credentials",
    );
    const [{ count }] = await stack.sql<{ count: number }[]>`
      select count(*)::int as count from app.second_factors where user_id = ${payload.id}`;
    expect(count).toBe(0);
  });

  it("answers an otpauth URL for any authenticator app, and stores the secret only sealed", async () => {
    const email = uniqueEmail("url");
    const { accessToken, payload } = expectSession(await post("/auth/register", { name: "U", email, password }), 201);
    await verifyAddress(stack, email, accessToken);
    const enrolled = await post("/auth/mfa/enroll", { password }, accessToken);
    const { otpauthUrl, secret, factorId } = enrollment.parse((enrolled.body as { data: unknown }).data);
    const url = new URL(otpauthUrl);
    expect(url.protocol).toBe("otpauth:");
    expect(url.host).toBe("totp");
    expect(decodeURIComponent(url.pathname)).toBe(`/Notes:${email}`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      secret,
      issuer: "Notes",
      algorithm: "SHA1",
      digits: "6",
      period: "30",
    });
    const [stored] = await stack.sql<{ secret_sealed: string; user_id: string }[]>`
      select secret_sealed, user_id from app.second_factors where id = ${factorId}`;
    expect(stored.user_id).toBe(payload.id);
    expect(stored.secret_sealed).not.toContain(secret);
    // Still pending: signing in asks for no second step yet.
    expect(expectSession(await login(email), 200).mfaRequired).toBe(false);
  });

  it("refuses a wrong first code and leaves the factor pending", async () => {
    const email = uniqueEmail("wrong-first");
    const { accessToken } = expectSession(await post("/auth/register", { name: "W", email, password }), 201);
    await verifyAddress(stack, email, accessToken);
    const enrolled = await post("/auth/mfa/enroll", { password }, accessToken);
    const { factorId, secret } = enrollment.parse((enrolled.body as { data: unknown }).data);
    const wrong = String((Number(codeOf(secret)) + 1) % 1_000_000).padStart(6, "0");
    expectErrorCode(await post("/auth/mfa/activate", { factorId, code: wrong }, accessToken), "invalid_code");
    expect(expectSession(await login(email), 200).mfaRequired).toBe(false);
  });

  it("ends every other session on activation, and answers an aal2 session with ten recovery codes", async () => {
    const email = uniqueEmail("activate");
    const first = expectSession(await post("/auth/register", { name: "A", email, password }), 201);
    await verifyAddress(stack, email, first.accessToken);
    const other = expectSession(await login(email), 200);
    const enrolled = await post("/auth/mfa/enroll", { password }, first.accessToken);
    const { factorId, secret } = enrollment.parse((enrolled.body as { data: unknown }).data);
    await awayFromStepEdge();
    const activated = await post("/auth/mfa/activate", { factorId, code: codeOf(secret) }, first.accessToken);
    const data = activation.parse((activated.body as { data: unknown }).data);
    expect(data.mfaRequired).toBe(false);
    expect(data.recoveryCodes).toHaveLength(10);
    expect(new Set(data.recoveryCodes).size).toBe(10);
    expectErrorCode(await get("/notes-fetch", other.accessToken), "token_revoked");
    expectErrorCode(await get("/notes-fetch", first.accessToken), "token_revoked");
    expect((await get("/notes-fetch", data.accessToken)).status).toBe(200);
    const { claims } = decodeAccessToken(data.accessToken);
    expect(claims.aal).toBe("aal2");
    expect((claims.amr as { method: string }[]).map((entry) => entry.method)).toEqual(["password", "totp"]);
  });

  it("refuses a second enrolment while a factor is active", async () => {
    const owner = await enrolledAccount("twice");
    expectErrorCode(await post("/auth/mfa/enroll", { password }, owner.accessToken), "factor_exists");
  });
});

describe("a session that has not made the second step", () => {
  it("gets 403 mfa_required from every notes and account call, and answers the user and a local sign-out", async () => {
    const owner = await enrolledAccount("aal1");
    const { accessToken } = await firstStep(owner.email);
    const refusals = [
      await get("/notes-fetch", accessToken),
      await get("/notes-changes", accessToken),
      await post("/notes-create", { title: "t" }, accessToken),
      await get("/auth/sessions", accessToken),
      await get("/auth/events", accessToken),
      await get("/auth/mfa", accessToken),
      await post("/auth/change-password", { currentPassword: password, newPassword: "another password" }, accessToken),
      await post("/auth/delete-account", { password }, accessToken),
      await post("/auth/logout", { scope: "global" }, accessToken),
      await post("/auth/mfa/unenroll", { factorId: owner.factorId, code: codeOf(owner.secret) }, accessToken),
      await post("/auth/mfa/recovery-codes", { code: codeOf(owner.secret) }, accessToken),
      await post("/auth/mfa/enroll", { password }, accessToken),
    ];
    for (const refused of refusals) expect(expectAuthErrorOrNotes(refused)).toBe("mfa_required");
    expect((await get("/auth/user", accessToken)).status).toBe(200);
    expect((await post("/auth/logout", {}, accessToken)).status).toBe(200);
  });

  it("reaches no note through row-level security with the same claims", async () => {
    const owner = await enrolledAccount("rls");
    const created = await post("/notes-create", { title: "secret plans" }, owner.accessToken);
    expect(created.status).toBe(201);
    const { accessToken } = await firstStep(owner.email);
    const { claims } = decodeAccessToken(accessToken);
    const seen = await stack.sql.begin(async (tx) => {
      await tx`select set_config('role', 'authenticated', true), set_config('request.jwt.claims', ${
        JSON.stringify(claims)
      }, true)`;
      const notes = await tx<{ id: string }[]>`select id from public.notes`;
      const inserted = await tx.savepoint((point) =>
        point`insert into public.notes (created_by, title) values (${owner.userId}, 'planted') returning id`
      ).catch((error: { code?: string }) => error.code);
      return { notes: notes.length, inserted };
    });
    expect(seen).toEqual({ notes: 0, inserted: "42501" });
  });

  it("stays at aal1 through a refresh, and a password reset's session is aal1 too", async () => {
    const owner = await enrolledAccount("reset");
    const { refreshToken } = await firstStep(owner.email);
    const refreshed = expectSession(await post("/auth/refresh", { refreshToken }), 200);
    expect(refreshed.mfaRequired).toBe(true);
    expectErrorCode(await get("/notes-fetch", refreshed.accessToken), "mfa_required");

    expect((await post("/auth/request-password-reset", { email: owner.email })).status).toBe(200);
    const code = await readResetCode(owner.email, 0, stack.logFile);
    const reset = expectSession(
      await post("/auth/create-password", { email: owner.email, password: "a brand new secret", code }),
      200,
    );
    expect(reset.mfaRequired).toBe(true);
    expectErrorCode(await get("/notes-fetch", reset.accessToken), "mfa_required");
  });
});

/** The error code of an answer in either envelope. */
function expectAuthErrorOrNotes(response: Awaited<ReturnType<typeof post>>): string {
  expect(response.status, response.text).toBe(403);
  return (response.body as { code: string }).code;
}

describe("the second step", () => {
  it("accepts a code once: a second sign-in within the same step cannot use it again", async () => {
    const owner = await enrolledAccount("replay");
    await forgetLastStep(owner.factorId);
    await awayFromStepEdge();
    const code = codeOf(owner.secret);
    const first = await firstStep(owner.email);
    const second = await firstStep(owner.email);
    const verified = expectSession(await post("/auth/mfa/verify", { code }, first.accessToken), 200);
    expect(verified.mfaRequired).toBe(false);
    expect((await get("/notes-fetch", verified.accessToken)).status).toBe(200);
    // The aal1 session it replaced is over.
    expectErrorCode(await get("/auth/user", first.accessToken), "token_revoked");
    expectErrorCode(await post("/auth/mfa/verify", { code }, second.accessToken), "invalid_code");
  });

  it("accepts the codes of one step before and after now, and refuses those two steps away", async () => {
    const owner = await enrolledAccount("window");
    for (const steps of [-2, 2]) {
      await forgetLastStep(owner.factorId);
      await awayFromStepEdge();
      const { accessToken } = await firstStep(owner.email);
      expectErrorCode(
        await post("/auth/mfa/verify", { code: codeOf(owner.secret, steps) }, accessToken),
        "invalid_code",
      );
    }
    for (const steps of [-1, 1]) {
      await forgetLastStep(owner.factorId);
      await awayFromStepEdge();
      const { accessToken } = await firstStep(owner.email);
      expectSession(await post("/auth/mfa/verify", { code: codeOf(owner.secret, steps) }, accessToken), 200);
    }
  });

  it("lets exactly one of 10 concurrent verifies of one fresh code through", async () => {
    const owner = await enrolledAccount("race");
    const sessions = await Promise.all(Array.from({ length: 10 }, () => firstStep(owner.email)));
    await forgetLastStep(owner.factorId);
    await awayFromStepEdge(5_000);
    const code = codeOf(owner.secret);
    const answers = await Promise.all(
      sessions.map(({ accessToken }) => post("/auth/mfa/verify", { code }, accessToken)),
    );
    // The other nine are replays of a genuine code: refused, and not counted toward the lockout.
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, ...Array(9).fill(400)]);
  });

  it("locks the factor after 5 wrong codes from anywhere: the right code is refused too, with Retry-After", async () => {
    const owner = await enrolledAccount("lockout");
    await forgetLastStep(owner.factorId);
    const { accessToken } = await firstStep(owner.email);
    for (let guess = 0; guess < 5; guess++) {
      // Each from an address of its own: the count is the factor's, not an address's.
      expectErrorCode(await post("/auth/mfa/verify", { code: "000000" }, accessToken), "invalid_code");
    }
    await awayFromStepEdge();
    const locked = await post("/auth/mfa/verify", { code: codeOf(owner.secret) }, accessToken);
    expectErrorCode(locked, "rate_limited");
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(14 * 60);
    const [events] = await stack.sql<{ failed: number; locked: number }[]>`
      select count(*) filter (where type = 'second_factor_failed')::int as failed,
             count(*) filter (where type = 'second_factor_locked')::int as locked
      from app.security_events where user_id = ${owner.userId}`;
    expect(events).toEqual({ failed: 5, locked: 1 });
  });
});

describe("recovery codes", () => {
  it("each works once, and neither a code nor the secret is anywhere in the database in plain text", async () => {
    const owner = await enrolledAccount("recover");
    const [code] = owner.recoveryCodes;
    const first = await firstStep(owner.email);
    const recovered = await post("/auth/mfa/recover", { recoveryCode: code.toUpperCase() }, first.accessToken);
    expect(recovered.status, recovered.text).toBe(200);
    const data = recovery.parse((recovered.body as { data: unknown }).data);
    expect(data.recoveryCodesLeft).toBe(9);
    expect((await get("/notes-fetch", data.accessToken)).status).toBe(200);
    const second = await firstStep(owner.email);
    expectErrorCode(await post("/auth/mfa/recover", { recoveryCode: code }, second.accessToken), "invalid_code");

    const dump = await stack.sql<{ text: string }[]>`
      select concat_ws(' ', (select string_agg(t::text, ' ') from app.second_factors t),
                            (select string_agg(t::text, ' ') from app.recovery_codes t),
                            (select string_agg(t::text, ' ') from app.security_events t),
                            (select string_agg(t::text, ' ') from app.mail_outbox t),
                            (select string_agg(t::text, ' ') from app.sessions t)) as text`;
    for (
      const secret of [
        owner.secret,
        ...owner.recoveryCodes,
        ...owner.recoveryCodes.map((c) => c.replace(/-/g, "")),
      ]
    ) {
      expect(dump[0].text.toLowerCase()).not.toContain(secret.toLowerCase());
    }
  });

  it("are replaced with a current code at aal2: the old ones stop working", async () => {
    const owner = await enrolledAccount("replace");
    await forgetLastStep(owner.factorId);
    expectErrorCode(await post("/auth/mfa/recovery-codes", {}, owner.accessToken), "invalid_request");
    await awayFromStepEdge();
    const replaced = await post("/auth/mfa/recovery-codes", { code: codeOf(owner.secret) }, owner.accessToken);
    expect(replaced.status, replaced.text).toBe(200);
    const { recoveryCodes } = (replaced.body as { data: { recoveryCodes: string[] } }).data;
    expect(recoveryCodes).toHaveLength(10);
    const { accessToken } = await firstStep(owner.email);
    expectErrorCode(
      await post("/auth/mfa/recover", { recoveryCode: owner.recoveryCodes[0] }, accessToken),
      "invalid_code",
    );
    expectSession(await post("/auth/mfa/recover", { recoveryCode: recoveryCodes[0] }, accessToken), 200);
  });
});

describe("removing the factor", () => {
  it("needs aal2 and a current code; then signing in asks only for the password", async () => {
    const owner = await enrolledAccount("unenroll");
    expectErrorCode(
      await post("/auth/mfa/unenroll", { factorId: owner.factorId }, owner.accessToken),
      "invalid_request",
    );
    const listing = await get("/auth/mfa", owner.accessToken);
    const listed = factorList.parse((listing.body as { data: unknown }).data);
    expect(listed.factors.map((factor) => [factor.id, factor.status])).toEqual([[owner.factorId, "active"]]);
    expect(listed.recoveryCodesLeft).toBe(10);
    await forgetLastStep(owner.factorId);
    await awayFromStepEdge();
    const removed = await post(
      "/auth/mfa/unenroll",
      { factorId: owner.factorId, code: codeOf(owner.secret) },
      owner.accessToken,
    );
    expect(removed.status, removed.text).toBe(200);
    expect(expectSession(await login(owner.email), 200).mfaRequired).toBe(false);
  });

  it("by an admin ends the account's sessions, is logged with the admin as actor, and the user is mailed", async () => {
    const owner = await enrolledAccount("lost");
    const adminEmail = uniqueEmail("admin");
    expectSession(await post("/auth/register", { name: "Admin", email: adminEmail, password }), 201);
    await grantAdmin(stack, adminEmail);
    const admin = expectSession(await login(adminEmail), 200);
    const removed = await post("/admin-users", { id: owner.userId, removeMfa: true }, admin.accessToken);
    expect(removed.status, removed.text).toBe(200);
    expectErrorCode(await get("/notes-fetch", owner.accessToken), "token_revoked");
    expectErrorCode(
      await post("/admin-users", { id: owner.userId, removeMfa: true }, admin.accessToken),
      "factor_not_found",
    );
    expect(expectSession(await login(owner.email), 200).mfaRequired).toBe(false);
    const [event] = await stack.sql<{ actor_id: string }[]>`
      select actor_id from app.security_events where user_id = ${owner.userId} and type = 'second_factor_removed'`;
    expect(event.actor_id).toBe(admin.payload.id);
  });

  it("by an operator with npm run admin -- remove-mfa", async () => {
    const owner = await enrolledAccount("operator");
    const result = await runAdminCommand(["remove-mfa", owner.email], { DATABASE_URL: stack.databaseUrl });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`${owner.email} has no second factor now`);
    expect(expectSession(await login(owner.email), 200).mfaRequired).toBe(false);
  });
});

describe("mails", () => {
  it("tell the user when a factor is added or removed and when recovery codes are used or replaced", async () => {
    const owner = await enrolledAccount("mails");
    const { accessToken } = await firstStep(owner.email);
    const recovered = recovery.parse(
      ((await post("/auth/mfa/recover", { recoveryCode: owner.recoveryCodes[1] }, accessToken)).body as {
        data: unknown;
      }).data,
    );
    await forgetLastStep(owner.factorId);
    await awayFromStepEdge();
    expect((await post("/auth/mfa/recovery-codes", { code: codeOf(owner.secret) }, recovered.accessToken)).status)
      .toBe(200);
    await forgetLastStep(owner.factorId);
    await awayFromStepEdge();
    expect(
      (await post(
        "/auth/mfa/unenroll",
        { factorId: owner.factorId, code: codeOf(owner.secret) },
        recovered.accessToken,
      ))
        .status,
    ).toBe(200);
    const subjects = await stack.sql<{ subject: string }[]>`
      select subject from app.mail_outbox where recipient = ${owner.email} order by id`;
    expect(subjects.map((mail) => mail.subject)).toEqual([
      "Confirm your email address",
      "A second factor was added to your account",
      "A recovery code was used",
      "Your recovery codes were replaced",
      "The second factor was removed from your account",
    ]);
    const events = await stack.sql<{ type: string }[]>`
      select type from app.security_events where user_id = ${owner.userId} and type like '%factor%' or
        (user_id = ${owner.userId} and type like 'recovery%') order by id`;
    expect(events.map((event) => event.type)).toEqual([
      "second_factor_added",
      "recovery_code_used",
      "recovery_codes_replaced",
      "second_factor_removed",
    ]);
  });
});
