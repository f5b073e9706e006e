/**
 * Signing in with a code sent by email (POST /auth/otp, POST /auth/otp/verify), reading each code from the stack's
 * log as a developer does locally. On a stack of its own that trusts `x-forwarded-for` (each request comes from an
 * address of its own, so only the per-email bounds apply) and mails a code as often as asked (no minute between two).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { authSuccessEnvelope } from "../supabase/functions/_shared/contract/mod.ts";
import { countResetMails, freshAddress, readMailedCode, stackLog, uniqueEmail, waitForLog } from "./support/api.ts";
import { decodeAccessToken, expectAuthError, expectSession } from "./support/auth.ts";
import { expectErrorCode } from "./support/error-codes.ts";
import { awayFromStepEdge, codeOf, enrolledAccount } from "./support/second-factor.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";

let stack: ScratchStack;

beforeAll(async () => {
  stack = await startScratchStack("sign_in_codes", {
    env: { BCRYPT_COST: "4", TRUST_PROXY: "true", VERIFICATION_MAIL_MIN_INTERVAL_SECONDS: "0" },
  });
});

afterAll(async () => {
  await stack?.stop();
});

const codeSent = authSuccessEnvelope(z.object({}).strict());
const password = "correct horse battery";

function post(path: string, body: unknown, token?: string) {
  return stack.call(path, { body, token, headers: { "x-forwarded-for": freshAddress() } });
}

async function register(label: string): Promise<{ email: string; userId: string; accessToken: string }> {
  const email = uniqueEmail(label);
  const session = expectSession(await post("/auth/register", { name: label, email, password }), 201);
  return { email, userId: session.payload.id, accessToken: session.accessToken };
}

/** Asks for a code for `email` and returns the one mailed. */
async function sendCode(email: string): Promise<string> {
  const before = countResetMails(email, stack.logFile, "sign-in");
  const response = await post("/auth/otp", { email });
  expect(response.status, response.text).toBe(200);
  return await readMailedCode(email, { kind: "sign-in", after: before, logFile: stack.logFile });
}

/** An eight-digit code that is not `code`. */
function otherThan(code: string, by = 1): string {
  return String((Number(code) + by) % 100_000_000).padStart(8, "0");
}

function expectInvalidCode(response: Awaited<ReturnType<typeof post>>): void {
  expectAuthError(response, 400);
  expectErrorCode(response, "invalid_code");
}

describe("POST /auth/otp", () => {
  it.each(["/auth/otp", "/auth-otp"])(
    "answers 200 with the same body for a known and an unknown email through %s, mailing only the known",
    async (path) => {
      const user = await register("otp-known");
      const unknown = uniqueEmail("otp-unknown");
      const forUnknown = await post(path, { email: unknown });
      const forKnown = await post(path, { email: user.email });
      for (const response of [forUnknown, forKnown]) {
        expect(response.status).toBe(200);
        expect(codeSent.parse(response.body).statusCode).toBe(200);
      }
      expect(forKnown.body).toEqual(forUnknown.body);
      expect(forKnown.body).toMatchObject({ message: expect.stringMatching(/if an account exists/i) });
      expect(await readMailedCode(user.email, { kind: "sign-in", logFile: stack.logFile })).toMatch(/^\d{8}$/);
      // The known address's mail is printed, and the outbox is printed in order: none went to the stranger.
      expect(countResetMails(unknown, stack.logFile, "sign-in")).toBe(0);
    },
  );

  it("answers 400 naming the email when it is missing or not an email", async () => {
    expect(expectAuthError(await post("/auth/otp", {}), 400).message).toBe("email is required");
    expect(expectAuthError(await post("/auth/otp", { email: "nope" }), 400).message).toMatch(
      /email must be a valid email address/,
    );
  });
});

describe("POST /auth/otp/verify", () => {
  it.each(["/auth/otp/verify", "/auth-otp-verify"])(
    "signs in through %s as a login does; a proven address keeps its password and sessions",
    async (path) => {
      const user = await register("otp-sign-in");
      // A proven address (an unproven one is reclaimed: below).
      await stack.sql`update app.users set is_verified = true where id = ${user.userId}`;
      const code = await sendCode(user.email);
      const session = expectSession(await post(path, { email: user.email, code }), 200);
      expect(session.payload.email).toBe(user.email);
      expect(session.payload.isVerified).toBe(true);
      expect(session.mfaRequired).toBe(false);
      expect(session.refreshToken).toBeTruthy();
      expect(session.deviceToken).toBeTruthy();
      expect(decodeAccessToken(session.accessToken).claims.sub).toBe(user.userId);
      expect((await stack.call("/notes-fetch", { token: session.accessToken })).status).toBe(200);
      // A proven address keeps its password, and its other sessions.
      expect((await post("/auth/login", { email: user.email, password })).status).toBe(200);
      expect((await stack.call("/auth/user", { token: user.accessToken })).status).toBe(200);
    },
  );

  it("refuses a code used once already", async () => {
    const { email } = await register("otp-used");
    const code = await sendCode(email);
    expectSession(await post("/auth/otp/verify", { email, code }), 200);
    expectInvalidCode(await post("/auth/otp/verify", { email, code }));
  });

  it("refuses a code a newer one superseded, and takes the newer", async () => {
    const { email } = await register("otp-superseded");
    const old = await sendCode(email);
    const current = await sendCode(email);
    expectInvalidCode(await post("/auth/otp/verify", { email, code: old }));
    expectSession(await post("/auth/otp/verify", { email, code: current }), 200);
  });

  it("refuses an expired code", async () => {
    const { email, userId } = await register("otp-expired");
    const code = await sendCode(email);
    await stack.sql`update app.sign_in_codes set expires_at = now() - interval '1 second' where user_id = ${userId}`;
    expectInvalidCode(await post("/auth/otp/verify", { email, code }));
  });

  it("answers a code for an unknown email as a wrong one", async () => {
    expectInvalidCode(await post("/auth/otp/verify", { email: uniqueEmail("otp-nobody"), code: "12345678" }));
  });

  it("stops at 10 wrong codes an hour for an email, across 5 codes asked for", async () => {
    const { email } = await register("otp-guesses");
    let code = "";
    for (let asked = 0; asked < 5; asked++) {
      code = await sendCode(email);
      for (const by of [1, 2]) expectInvalidCode(await post("/auth/otp/verify", { email, code: otherThan(code, by) }));
    }
    // The eleventh guess is refused before it is checked, the right code included, from any client address.
    const refused = await post("/auth/otp/verify", { email, code });
    expect(refused.status, refused.text).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("refuses a suspended account's right code", async () => {
    const { email, userId } = await register("otp-suspended");
    const code = await sendCode(email);
    await stack.sql`update app.users set status = 'SUSPENDED' where id = ${userId}`;
    const refused = await post("/auth/otp/verify", { email, code });
    expect(refused.status, refused.text).toBe(403);
    expectErrorCode(refused, "account_suspended");
  });

  it("leaves the second step to come for an account with a factor", async () => {
    const owner = await enrolledAccount(stack, "otp-factor", password);
    const code = await sendCode(owner.email);
    const session = expectSession(await post("/auth/otp/verify", { email: owner.email, code }), 200);
    expect(session.mfaRequired).toBe(true);
    expect((await stack.call("/notes-fetch", { token: session.accessToken })).status).toBe(403);
    await awayFromStepEdge();
    const verified = await post("/auth/mfa/verify", { code: codeOf(owner.secret, 1) }, session.accessToken);
    expect(verified.status, verified.text).toBe(200);
  });
});

describe("a code against a pre-registrant", () => {
  it("takes back their factor, identities, passkeys, password and sessions", async () => {
    // A factor enrolled while the address was unproven (as the service once allowed), with a provider identity and a
    // passkey added then: enrolled on a verified account, which is then made unproven again.
    const squatter = await enrolledAccount(stack, "otp-squatter", password);
    await stack.sql`
      insert into app.identities (user_id, provider, issuer, subject, email, trusted)
      values (${squatter.userId}, 'local', 'https://provider.example', ${crypto.randomUUID()},
              'squatter@provider.example', false)`;
    await stack.sql`
      insert into app.passkeys (user_id, credential_id, public_key, device_type, backed_up, aaguid, name, trusted)
      values (${squatter.userId}, ${crypto.randomUUID().replaceAll("-", "")}, ${new Uint8Array(32)},
              'singleDevice', false, ${crypto.randomUUID()}, 'Squatter key', false)`;
    await stack.sql`update app.users set is_verified = false where id = ${squatter.userId}`;

    const code = await sendCode(squatter.email);
    const owner = expectSession(await post("/auth/otp/verify", { email: squatter.email, code }), 200);
    expect(owner.mfaRequired).toBe(false);
    expect(owner.payload.isVerified).toBe(true);
    expect((await stack.call("/notes-fetch", { token: owner.accessToken })).status).toBe(200);
    expect(await stack.sql`select from app.second_factors where user_id = ${squatter.userId}`).toHaveLength(0);
    expect(await stack.sql`select from app.identities where user_id = ${squatter.userId}`).toHaveLength(0);
    expect(await stack.sql`select from app.passkeys where user_id = ${squatter.userId}`).toHaveLength(0);
    // The squatter's password signs nobody in, and their session has ended.
    expect((await post("/auth/login", { email: squatter.email, password })).status).toBe(401);
    expect((await stack.call("/auth/user", { token: squatter.accessToken })).status).toBe(401);
    // The owner is told what was taken back.
    await waitForLog(
      (log) => log.includes(`to=${squatter.email} subject="You signed in with a code"`) || undefined,
      "reclaim mail",
      stack.logFile,
    );
    expect(stackLog(stack.logFile)).toContain('the passkey "Squatter key"');
  });
});

describe("OTP_SIGN_UP=true", () => {
  let signUps: ScratchStack;

  beforeAll(async () => {
    signUps = await startScratchStack("sign_up_codes", {
      env: { TRUST_PROXY: "true", VERIFICATION_MAIL_MIN_INTERVAL_SECONDS: "0", OTP_SIGN_UP: "true" },
    });
  });

  afterAll(async () => {
    await signUps?.stop();
  });

  function postTo(path: string, body: unknown, token?: string) {
    return signUps.call(path, { body, token, headers: { "x-forwarded-for": freshAddress() } });
  }

  async function sendCodeTo(email: string): Promise<string> {
    const before = countResetMails(email, signUps.logFile, "sign-in");
    const response = await postTo("/auth/otp", { email });
    expect(response.status, response.text).toBe(200);
    expect(response.body).toMatchObject({ message: expect.stringMatching(/if an account exists/i) });
    return await readMailedCode(email, { kind: "sign-in", after: before, logFile: signUps.logFile });
  }

  it("creates the account of a new address with the code, verified and named, and signs in to it later", async () => {
    const email = uniqueEmail("otp-new");
    const code = await sendCodeTo(email);
    expect(code).toMatch(/^\d{8}$/);
    expectInvalidCode(await postTo("/auth/otp/verify", { email, code: otherThan(code), name: "Newcomer" }));

    const created = await postTo("/auth/otp/verify", { email, code, name: " Newcomer " });
    const session = expectSession(created, 200);
    expect(created.body).toMatchObject({ message: "Account created" });
    expect(session.payload).toMatchObject({ email, name: "Newcomer", isVerified: true, isAnonymous: false });
    const note = await signUps.call("/notes-create", { token: session.accessToken, body: { title: "by code" } });
    expect(note.status, note.text).toBe(201);
    // The code worked once; the next code signs in to the account it made, whose name stays.
    expectInvalidCode(await postTo("/auth/otp/verify", { email, code }));
    const again = await postTo("/auth/otp/verify", { email, code: await sendCodeTo(email), name: "Ignored" });
    expect(again.body).toMatchObject({ message: "Login successful" });
    expect(expectSession(again, 200).payload).toMatchObject({ id: session.payload.id, name: "Newcomer" });
  });

  it("names an account made without a name after the address, and refuses an expired code", async () => {
    const email = uniqueEmail("otp-unnamed");
    const stale = await sendCodeTo(email);
    await signUps.sql`update app.sign_up_codes set expires_at = now() - interval '1 second' where email = ${email}`;
    expectInvalidCode(await postTo("/auth/otp/verify", { email, code: stale }));
    const session = expectSession(await postTo("/auth/otp/verify", { email, code: await sendCodeTo(email) }), 200);
    expect(session.payload.name).toBe(email.split("@")[0]);
  });

  it("lets no sign-up code into an account registered after it was mailed", async () => {
    const email = uniqueEmail("otp-raced");
    const code = await sendCodeTo(email);
    expectSession(await postTo("/auth/register", { name: "Registrant", email, password }), 201);
    expectInvalidCode(await postTo("/auth/otp/verify", { email, code }));
  });
});

describe("OTP_SIGN_UP unset", () => {
  it("stores no code and creates no account for an address that has none", async () => {
    const email = uniqueEmail("otp-no-sign-up");
    expect((await post("/auth/otp", { email })).status).toBe(200);
    // The drain resolves requests in order: once a later request's mail is out, this one was resolved.
    await sendCode((await register("otp-after")).email);
    expect(countResetMails(email, stack.logFile, "sign-in")).toBe(0);
    expectInvalidCode(await post("/auth/otp/verify", { email, code: "12345678", name: "Nobody" }));
    expect(await stack.sql`select 1 from app.users where email = ${email}`).toHaveLength(0);
    expect(await stack.sql`select 1 from app.sign_up_codes where email = ${email}`).toHaveLength(0);
  });
});
