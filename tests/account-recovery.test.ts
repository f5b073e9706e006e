/**
 * A reset always gives the account back: what a squatter who registered the
 * owner's address, or a thief with a stolen session or admin token, could add or
 * take away, and what the owner's reset code undoes. On a stack of its own that
 * trusts `x-forwarded-for`, so each request comes from an address of its own;
 * state that only an older version of the service could have made (a factor
 * enrolled while the address was unproven) is set up in SQL, as such a database
 * holds it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reauthentication } from "../supabase/functions/_shared/contract/mod.ts";
import { sealSecret, unsealSecret } from "../supabase/functions/_shared/auth/sealed-secrets.ts";
import { testJwtSecret, testMfaSecretKey } from "../dev/harness/stack.ts";
import { freshAddress, readResetCode, stackLog, uniqueEmail, waitForLog } from "./support/api.ts";
import { decodeAccessToken, expectSession } from "./support/auth.ts";
import { expectErrorCode } from "./support/error-codes.ts";
import { grantAdmin } from "./support/admin.ts";
import { awayFromStepEdge, codeOf, enrolledAccount, verifyAddress } from "./support/second-factor.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";

let stack: ScratchStack;

beforeAll(async () => {
  stack = await startScratchStack("account_recovery", {
    env: { BCRYPT_COST: "4", TRUST_PROXY: "true", RESET_MAIL_MIN_INTERVAL_SECONDS: "0" },
  });
});

afterAll(async () => {
  await stack?.stop();
});

const password = "correct horse battery";
const ownersPassword = "the owner's own secret";

function post(path: string, body: unknown, token?: string) {
  return stack.call(path, { body, token, headers: { "x-forwarded-for": freshAddress() } });
}

function remove(path: string, token: string) {
  return stack.call(path, { method: "DELETE", token, headers: { "x-forwarded-for": freshAddress() } });
}

function get(path: string, token: string) {
  return stack.call(path, { token, headers: { "x-forwarded-for": freshAddress() } });
}

/** Waits until the stack has printed a mail to `email` with `subject` (mails leave through the outbox). */
async function expectMail(email: string, subject: string): Promise<void> {
  await waitForLog((log) => log.includes(`to=${email} subject="${subject}"`) || undefined, subject, stack.logFile);
}

/** The owner's reset: asks for a code, sets a password with it, and answers the session it starts. */
async function ownersReset(email: string) {
  const before = (stackLog(stack.logFile).match(new RegExp(`to=${email} subject="Your password reset code"`, "g")) ??
    []).length;
  expect((await post("/auth/request-password-reset", { email })).status).toBe(200);
  const code = await readResetCode(email, before, stack.logFile);
  return expectSession(await post("/auth/create-password", { email, code, password: ownersPassword }), 200);
}

/** An identity of the account as a provider link would have stored it, `daysAgo` days ago. */
async function linkedIdentity(userId: string, options: { daysAgo: number; trusted: boolean }): Promise<string> {
  const [row] = await stack.sql<{ id: string }[]>`
    insert into app.identities (user_id, provider, issuer, subject, email, trusted, created_at)
    values (${userId}, 'local', 'https://provider.example', ${crypto.randomUUID()}, 'someone@provider.example',
            ${options.trusted}, now() - make_interval(days => ${options.daysAgo}))
    returning id`;
  return row.id;
}

async function identityIds(userId: string): Promise<string[]> {
  const rows = await stack.sql<{ id: string }[]>`select id from app.identities where user_id = ${userId} order by id`;
  return rows.map((row) => row.id);
}

describe("a pre-registrant's second factor", () => {
  it("cannot be enrolled while the address is unproven", async () => {
    const email = uniqueEmail("squatted");
    const squatter = expectSession(await post("/auth/register", { name: "Squatter", email, password }), 201);
    const enrolled = await post("/auth/mfa/enroll", { password }, squatter.accessToken);
    expect(enrolled.status, enrolled.text).toBe(403);
    expectErrorCode(enrolled, "email_not_verified");
    expect(await stack.sql`select from app.second_factors where user_id = ${squatter.payload.id}`).toHaveLength(0);
  });

  it("is gone after the owner's reset: the owner signs in at aal1 with no factor, the squatter's codes are refused", async () => {
    // A factor enrolled while the address was unproven, as the service allowed before: enrolled on a verified
    // account, which is then made unproven again, as a squatter's always was.
    const squatter = await enrolledAccount(stack, "squatter", password);
    await stack.sql`update app.users set is_verified = false where id = ${squatter.userId}`;

    const owner = await ownersReset(squatter.email);
    expect(owner.mfaRequired).toBe(false);
    expect(decodeAccessToken(owner.accessToken).claims.second_factor).toBeUndefined();
    expect((await get("/notes-fetch", owner.accessToken)).status).toBe(200);
    expect((await get("/auth/sessions", owner.accessToken)).status).toBe(200);
    expect(await stack.sql`select from app.second_factors where user_id = ${squatter.userId}`).toHaveLength(0);

    // The squatter's recovery code passes no second step, and the password they chose signs nobody in.
    const recovered = await post("/auth/mfa/recover", { recoveryCode: squatter.recoveryCodes[0] }, owner.accessToken);
    expect(recovered.status, recovered.text).toBe(404);
    expect((await post("/auth/login", { email: squatter.email, password })).status).toBe(401);
    // The owner is told what was taken back.
    await expectMail(squatter.email, "Your password was reset");
    expect(stackLog(stack.logFile)).toContain(
      "the authenticator app (second factor) added before the address was proven",
    );
  });

  it("is gone with the provider identity after the owner's reset, when a provider that did not vouch made the account", async () => {
    const squatter = await enrolledAccount(stack, "provider-squatter", password);
    await stack.sql`update app.users set is_verified = false, password_hash = null where id = ${squatter.userId}`;
    await linkedIdentity(squatter.userId, { daysAgo: 30, trusted: false });

    const owner = await ownersReset(squatter.email);
    expect(owner.mfaRequired).toBe(false);
    expect(await identityIds(squatter.userId)).toEqual([]);
    expect(await stack.sql`select from app.second_factors where user_id = ${squatter.userId}`).toHaveLength(0);
  });

  it("of a proven address stays after a reset, and the reset's session must still make the second step", async () => {
    const owner = await enrolledAccount(stack, "proven", password);
    const reset = await ownersReset(owner.email);
    expect(reset.mfaRequired).toBe(true);
    expect((await get("/notes-fetch", reset.accessToken)).status).toBe(403);
    await awayFromStepEdge();
    // The next step's code: activation spent this one.
    expect((await post("/auth/mfa/verify", { code: codeOf(owner.secret, 1) }, reset.accessToken)).status).toBe(200);
  });
});

describe("changing how the account signs in", () => {
  it("refuses a stolen session minutes old to link without the password, or to unlink, without a proof", async () => {
    const email = uniqueEmail("linked");
    const owner = expectSession(await post("/auth/register", { name: "Owner", email, password }), 201);
    const identity = await linkedIdentity(owner.payload.id, { daysAgo: 30, trusted: true });

    const link = await post(
      "/auth/identities/link",
      { provider: "local", redirectTo: "http://127.0.0.1:5173/" },
      owner.accessToken,
    );
    expect(link.status, link.text).toBe(400);
    const unlinked = await remove(`/auth/identities?id=${identity}`, owner.accessToken);
    expect(unlinked.status, unlinked.text).toBe(403);
    expectErrorCode(unlinked, "reauthentication_required");
    expect(await identityIds(owner.payload.id)).toEqual([identity]);

    // A wrong password proves nothing; the right one does, for this session only and for 5 minutes.
    const wrong = await post("/auth/reauthenticate", { password: "not the password" }, owner.accessToken);
    expect(wrong.status, wrong.text).toBe(401);
    const proved = await post("/auth/reauthenticate", { password }, owner.accessToken);
    expect(proved.status, proved.text).toBe(200);
    const until = Date.parse(reauthentication.parse((proved.body as { data: unknown }).data).reauthenticatedUntil);
    expect(until - Date.now()).toBeGreaterThan(4 * 60_000);
    expect(until - Date.now()).toBeLessThanOrEqual(5 * 60_000);

    const otherSession = expectSession(await post("/auth/login", { email, password }), 200);
    expect((await remove(`/auth/identities?id=${identity}`, otherSession.accessToken)).status).toBe(403);
    // Past its 5 minutes, the proof is spent.
    await stack.sql`update app.sessions set reauthenticated_at = now() - interval '6 minutes'
                    where id = ${String(decodeAccessToken(owner.accessToken).claims.session_id)}`;
    expect((await remove(`/auth/identities?id=${identity}`, owner.accessToken)).status).toBe(403);
    expect((await post("/auth/reauthenticate", { password }, owner.accessToken)).status).toBe(200);
    const done = await remove(`/auth/identities?id=${identity}`, owner.accessToken);
    expect(done.status, done.text).toBe(200);
    await expectMail(email, "A sign-in was removed from your account");
    const events = await stack.sql<{ type: string }[]>`
      select type from app.security_events where user_id = ${owner.payload.id} and type = 'reauthenticated'`;
    expect(events.length).toBe(2);
  });

  it("takes a code of the factor as a proof, and a replayed one as none", async () => {
    const owner = await enrolledAccount(stack, "code-proof", password);
    await awayFromStepEdge();
    const code = codeOf(owner.secret, 1);
    expect((await post("/auth/reauthenticate", { code }, owner.accessToken)).status).toBe(200);
    const replayed = await post("/auth/reauthenticate", { code }, owner.accessToken);
    expect(replayed.status, replayed.text).toBe(400);
    expectErrorCode(replayed, "invalid_code");
  });

  it("undoes with a reset the identities linked in the days before it, and keeps older trusted ones", async () => {
    const email = uniqueEmail("thief-linked");
    const owner = expectSession(await post("/auth/register", { name: "Owner", email, password }), 201);
    await verifyAddress(stack, email, owner.accessToken);
    const thiefs = await linkedIdentity(owner.payload.id, { daysAgo: 1, trusted: true });
    const owners = await linkedIdentity(owner.payload.id, { daysAgo: 30, trusted: true });
    await ownersReset(email);
    expect(await identityIds(owner.payload.id)).toEqual([owners]);
    expect(await identityIds(owner.payload.id)).not.toContain(thiefs);
    const dropped = await stack.sql<{ details: { reason: string } }[]>`
      select details from app.security_events where user_id = ${owner.payload.id} and type = 'identity_unlinked'`;
    expect(dropped.map((event) => event.details.reason)).toEqual(["account_reclaimed"]);
  });

  it("mails the owner after a password change", async () => {
    const email = uniqueEmail("changed");
    const owner = expectSession(await post("/auth/register", { name: "Owner", email, password }), 201);
    const changed = await post(
      "/auth/change-password",
      { currentPassword: password, newPassword: "a newer good secret" },
      owner.accessToken,
    );
    expect(changed.status, changed.text).toBe(200);
    await expectMail(email, "Your password was changed");
  });
});

describe("recovery codes and lockout", () => {
  it("refuses a used recovery code sent again without counting it: the factor stays unlocked", async () => {
    const owner = await enrolledAccount(stack, "replayed-recovery", password);
    const [used] = owner.recoveryCodes;
    const first = expectSession(await post("/auth/login", { email: owner.email, password }), 200);
    expect((await post("/auth/mfa/recover", { recoveryCode: used }, first.accessToken)).status).toBe(200);
    const again = expectSession(await post("/auth/login", { email: owner.email, password }), 200);
    for (let attempt = 0; attempt < 5; attempt++) {
      const replayed = await post("/auth/mfa/recover", { recoveryCode: used }, again.accessToken);
      expect(replayed.status, replayed.text).toBe(400);
    }
    await awayFromStepEdge();
    const verified = await post("/auth/mfa/verify", { code: codeOf(owner.secret, 1) }, again.accessToken);
    expect(verified.status, verified.text).toBe(200);
  });

  it("makes codes of 125 bits: five groups of five", async () => {
    const owner = await enrolledAccount(stack, "long-codes", password);
    for (const code of owner.recoveryCodes) expect(code).toMatch(/^[a-z2-7]{5}(-[a-z2-7]{5}){4}$/);
  });

  it("holds the lock after 100 wrong codes in a row until a reset, and mails the owner", async () => {
    const owner = await enrolledAccount(stack, "farmed", password);
    const session = expectSession(await post("/auth/login", { email: owner.email, password }), 200);
    // 99 wrong codes in a row across earlier lockouts, as a patient attacker with the password leaves them.
    await stack.sql`update app.second_factors set consecutive_failures = 99 where id = ${owner.factorId}`;
    expect((await post("/auth/mfa/verify", { code: "000000" }, session.accessToken)).status).toBe(400);
    await awayFromStepEdge();
    const locked = await post("/auth/mfa/verify", { code: codeOf(owner.secret) }, session.accessToken);
    expect(locked.status, locked.text).toBe(403);
    expectErrorCode(locked, "second_factor_locked");
    // Not a window that passes: a lockout's 15 minutes later it still holds.
    await stack
      .sql`update app.second_factors set failures_since = now() - interval '1 hour' where id = ${owner.factorId}`;
    expect((await post("/auth/mfa/verify", { code: codeOf(owner.secret) }, session.accessToken)).status).toBe(403);
    await expectMail(owner.email, "Someone knows your password");

    const reset = await ownersReset(owner.email);
    await awayFromStepEdge();
    const verified = await post("/auth/mfa/verify", { code: codeOf(owner.secret, 1) }, reset.accessToken);
    expect(verified.status, verified.text).toBe(200);
  });
});

describe("admins", () => {
  it("remove a user's lost factor, but neither another admin's nor their own", async () => {
    const admin = await enrolledAccount(stack, "admin", password);
    const otherAdmin = await enrolledAccount(stack, "other-admin", password);
    const user = await enrolledAccount(stack, "user", password);
    await grantAdmin(stack, admin.email);
    await grantAdmin(stack, otherAdmin.email);
    const removeMfa = (id: string) => post("/admin-users", { id, removeMfa: true }, admin.accessToken);

    const theirs = await removeMfa(otherAdmin.userId);
    expect(theirs.status, theirs.text).toBe(400);
    expectErrorCode(theirs, "cannot_remove_admin_factor");
    const own = await removeMfa(admin.userId);
    expect(own.status, own.text).toBe(400);
    expectErrorCode(own, "cannot_remove_own_factor");
    expect(await stack.sql`select from app.second_factors where user_id in (${admin.userId}, ${otherAdmin.userId})`)
      .toHaveLength(2);

    expect((await removeMfa(user.userId)).status).toBe(200);
    await expectMail(user.email, "The second factor was removed from your account");
  });
});

describe("the factor's secret in an access token", () => {
  it("does not open with JWT_SECRET: that and the password do not pass the second factor", async () => {
    const owner = await enrolledAccount(stack, "sealed", password);
    const aal1 = expectSession(await post("/auth/login", { email: owner.email, password }), 200);
    const claim = decodeAccessToken(aal1.accessToken).claims.second_factor as { sealed: string; key_id: string };
    const jwtSecret = new TextEncoder().encode(testJwtSecret);
    // Whoever holds JWT_SECRET, under any key id it could derive.
    for (const keyId of [claim.key_id, "v1"]) {
      expect(await unsealSecret({ jwtSecret, mfaSecretKey: jwtSecret }, { sealed: claim.sealed, keyId }))
        .toBeUndefined();
    }
    // The server, with MFA_SECRET_KEY, opens it.
    const mfaSecretKey = new TextEncoder().encode(testMfaSecretKey);
    expect(await unsealSecret({ jwtSecret, mfaSecretKey }, { sealed: claim.sealed, keyId: claim.key_id })).toBe(
      owner.secret,
    );
  });

  it("leaves out a secret sealed under JWT_SECRET before MFA_SECRET_KEY, and still checks its codes", async () => {
    const owner = await enrolledAccount(stack, "legacy-seal", password);
    // As a factor enrolled before this version holds it: its secret sealed under the key derived from JWT_SECRET.
    const jwtSecret = new TextEncoder().encode(testJwtSecret);
    const legacy = await sealSecret({ jwtSecret, mfaSecretKey: jwtSecret }, owner.secret, "v1");
    await stack.sql`update app.second_factors set secret_sealed = ${legacy.sealed}, secret_key_id = ${legacy.keyId}
                    where id = ${owner.factorId}`;
    const aal1 = expectSession(await post("/auth/login", { email: owner.email, password }), 200);
    expect(decodeAccessToken(aal1.accessToken).claims.second_factor).toEqual({ id: owner.factorId });
    await awayFromStepEdge();
    expect((await post("/auth/mfa/verify", { code: codeOf(owner.secret, 1) }, aal1.accessToken)).status).toBe(200);
  });
});
