/**
 * The account lifecycle's edges, each as an attacker would try it: an
 * address registered first by someone else, a flood of refused logins,
 * guessing that would lock a signed-in owner out, and
 * device tokens that outlive what they vouched for. On a stack of its own
 * that trusts `x-forwarded-for`, so each client can have an address of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshAddress, readMailedCode, readResetCode, uniqueEmail } from "./support/api.ts";
import { expectAuthError, expectSession } from "./support/auth.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";

let stack: ScratchStack;

beforeAll(async () => {
  stack = await startScratchStack("lifecycle", {
    env: {
      BCRYPT_COST: "4",
      TRUST_PROXY: "true",
      RESET_MAIL_MIN_INTERVAL_SECONDS: "0",
      VERIFICATION_MAIL_MIN_INTERVAL_SECONDS: "0",
    },
  });
});

afterAll(async () => {
  await stack?.stop();
});

const password = "correct horse battery";

function post(path: string, body: unknown, options: { token?: string; address?: string; userAgent?: string } = {}) {
  return stack.call(path, {
    body,
    token: options.token,
    headers: {
      "x-forwarded-for": options.address ?? freshAddress(),
      ...(options.userAgent ? { "user-agent": options.userAgent } : {}),
    },
  });
}

function login(email: string, secret: string, options: { deviceToken?: string; address?: string } = {}) {
  return post("/auth/login", { email, password: secret, deviceToken: options.deviceToken }, options);
}

async function register(email: string, secret = password) {
  return expectSession(await post("/auth/register", { name: "Someone", email, password: secret }), 201);
}

/** Fails logins from fresh addresses until the account's cap of 20 is full, so new devices are refused. */
async function fillAccountCap(email: string) {
  for (let guess = 0; guess < 20; guess++) {
    if ((await login(email, `wrong guess ${guess}`)).status === 429) break;
  }
  expectAuthError(await login(email, "wrong once more"), 429);
}

async function eventCount(email: string, type?: string): Promise<number> {
  const [row] = await stack.sql<{ count: number }[]>`
    select count(*)::int as count from app.security_events e join app.users u on u.id = e.user_id
    where u.email = ${email} and (${type ?? null}::text is null or e.type = ${type ?? null})`;
  return row.count;
}

describe("an address registered first by someone else", () => {
  it("ends with its owner: a code alone verifies nothing, and the owner's reset ends everything the first registrant held", async () => {
    const victim = uniqueEmail("victim");
    const attackerPassword = "the attacker's own";
    const attacker = await register(victim, attackerPassword);
    const attackerDevice = expectSession(await login(victim, attackerPassword), 200).deviceToken;

    // The owner, refused at sign-up, asks for a code and presents it alone: refused, and nothing changes.
    expectAuthError(await post("/auth/register", { name: "Owner", email: victim, password }), 409);
    expect((await post("/auth/resend-verification", { email: victim })).status).toBe(200);
    const code = await readMailedCode(victim, { kind: "verification", after: 1, logFile: stack.logFile });
    const alone = expectAuthError(await post("/auth/verify-email", { email: victim, code }), 401);
    expect(alone.code).toBe("credentials_required");
    const [unverified] = await stack.sql`select is_verified from app.users where email = ${victim}`;
    expect(unverified.is_verified).toBe(false);
    // The code was not used up by the refusal: its owner, proving the account, could still use it.
    const [codeRow] = await stack.sql`
      select attempts_left from app.email_verification_codes c join app.users u on u.id = c.user_id
      where u.email = ${victim}`;
    expect(codeRow.attempts_left).toBe(5);

    // The owner sets a password with a reset code: that proves the address, and verifies it.
    expect((await post("/auth/request-password-reset", { email: victim })).status).toBe(200);
    const resetCode = await readResetCode(victim, 0, stack.logFile);
    const owner = expectSession(
      await post("/auth/create-password", { email: victim, password: "the owner's password", code: resetCode }),
      200,
    );
    expect(owner.payload.isVerified).toBe(true);
    expect((await stack.call("/notes-create", { token: owner.accessToken, body: { title: "victim secret" } })).status)
      .toBe(201);

    // Everything the first registrant held is void: password, access token, refresh token and device token.
    expectAuthError(await login(victim, attackerPassword), 401);
    expect((await stack.call("/notes-fetch", { token: attacker.accessToken })).status).toBe(401);
    expectAuthError(await post("/auth/refresh", { refreshToken: attacker.refreshToken }), 401);
    await fillAccountCap(victim);
    expectAuthError(await login(victim, "the owner's password", { deviceToken: attackerDevice }), 429);
    // The owner's own device token, from the reset, still opens the account.
    expectSession(await login(victim, "the owner's password", { deviceToken: owner.deviceToken }), 200);
  });

  it("verifies with the account's own access token, or with its password; a wrong password counts as a failed login", async () => {
    const email = uniqueEmail("proof");
    const signedUp = await register(email);
    const code = await readMailedCode(email, { kind: "verification", logFile: stack.logFile });
    const wrong = expectAuthError(await post("/auth/verify-email", { email, code, password: "not the password" }), 401);
    expect(wrong.code).toBe("invalid_credentials");
    // Another account's token proves nothing about this one.
    const stranger = await register(uniqueEmail("stranger"));
    const borrowed = await post("/auth/verify-email", { email, code }, { token: stranger.accessToken });
    expect(expectAuthError(borrowed, 401).code).toBe("credentials_required");

    const verified = expectSession(
      await post("/auth/verify-email", { email, code }, { token: signedUp.accessToken }),
      200,
    );
    expect(verified.payload.isVerified).toBe(true);

    const other = uniqueEmail("by-password");
    await register(other);
    const otherCode = await readMailedCode(other, { kind: "verification", logFile: stack.logFile });
    const byPassword = expectSession(
      await post("/auth/verify-email", { email: other, code: otherCode, password }),
      200,
    );
    expect(byPassword.payload.isVerified).toBe(true);
  });
});

describe("refused logins", () => {
  it("add at most a handful of security-log rows, however many there are, and keep user agents short", async () => {
    const email = uniqueEmail("flooded");
    await register(email);
    const address = freshAddress();
    for (let guess = 0; guess < 5; guess++) expectAuthError(await login(email, `guess ${guess}`, { address }), 401);
    const before = await eventCount(email);
    const longAgent = "x".repeat(600);
    for (let attempt = 0; attempt < 200; attempt++) {
      const refused = await post("/auth/login", { email, password: "guess" }, { address, userAgent: longAgent });
      expect(refused.status).toBe(429);
    }
    expect((await eventCount(email)) - before).toBeLessThanOrEqual(10);
    expect(await eventCount(email, "login_refused_by_limit")).toBe(1);
    const agents = await stack.sql<{ length: number }[]>`
      select char_length(e.user_agent) as length from app.security_events e join app.users u on u.id = e.user_id
      where u.email = ${email} and e.type = 'login_refused_by_limit'`;
    expect(agents.map((row) => row.length)).toEqual([256]);
  }, 120_000);
});

describe("a signed-in owner under attack", () => {
  it("changes the password and deletes the account past the account's full cap", async () => {
    const email = uniqueEmail("besieged");
    const owner = await register(email);
    await fillAccountCap(email);
    const changed = expectSession(
      await post("/auth/change-password", { currentPassword: password, newPassword: "a fresh passphrase" }, {
        token: owner.accessToken,
      }),
      200,
    );

    const other = uniqueEmail("leaving");
    const leaving = await register(other);
    await fillAccountCap(other);
    const deleted = await stack.call("/auth/delete-account", {
      body: { password },
      token: leaving.accessToken,
      headers: { "x-forwarded-for": freshAddress() },
    });
    expect(deleted.status, deleted.text).toBe(200);

    // The session's own wrong passwords are capped: 5 a window, then 429 even for the right one.
    for (let guess = 0; guess < 5; guess++) {
      const wrong = await post("/auth/change-password", {
        currentPassword: `guess ${guess}`,
        newPassword: "whatever it is",
      }, {
        token: changed.accessToken,
      });
      expectAuthError(wrong, 401);
    }
    const capped = await post("/auth/change-password", {
      currentPassword: "a fresh passphrase",
      newPassword: "whatever it is",
    }, {
      token: changed.accessToken,
    });
    expectAuthError(capped, 429);
  }, 60_000);
});

describe("device tokens", () => {
  it("are capped per device and void after a password change; the one issued after it works", async () => {
    const email = uniqueEmail("device");
    await register(email);
    const signedIn = expectSession(await login(email, password), 200);
    const device = signedIn.deviceToken;
    await fillAccountCap(email);

    // Past the account's cap the device still gets in, but its own failures stop at 10.
    expectSession(await login(email, password, { deviceToken: device }), 200);
    for (let guess = 0; guess < 10; guess++) {
      expectAuthError(await login(email, `device guess ${guess}`, { deviceToken: device }), 401);
    }
    expectAuthError(await login(email, password, { deviceToken: device }), 429);
    // Signing in to another account with the same device token gives it none of its spent guesses back.
    const other = uniqueEmail("other-account");
    await register(other);
    for (let login_ = 0; login_ < 3; login_++) {
      expectSession(await login(other, password, { deviceToken: device }), 200);
    }
    expectAuthError(await login(email, password, { deviceToken: device }), 429);

    const changed = expectSession(
      await post("/auth/change-password", { currentPassword: password, newPassword: "the next passphrase" }, {
        token: signedIn.accessToken,
      }),
      200,
    );
    // The old token is no device any more; the one the change answered is.
    expectAuthError(await login(email, "the next passphrase", { deviceToken: device }), 429);
    expect(changed.deviceToken).not.toBe(device);
    expectSession(await login(email, "the next passphrase", { deviceToken: changed.deviceToken }), 200);
  }, 60_000);

  it("are void after a global sign-out", async () => {
    const email = uniqueEmail("signed-out");
    await register(email);
    const signedIn = expectSession(await login(email, password), 200);
    expect((await post("/auth/logout", { scope: "global" }, { token: signedIn.accessToken })).status).toBe(200);
    await fillAccountCap(email);
    expectAuthError(await login(email, password, { deviceToken: signedIn.deviceToken }), 429);
  }, 60_000);
});

describe("an account's deletion", () => {
  it("by the database owner in SQL leaves no rate-limit count or mail of its address", async () => {
    const email = uniqueEmail("operator-deleted");
    const account = await register(email);
    expectAuthError(await login(email, "a wrong password"), 401);
    expect((await post("/auth/request-password-reset", { email })).status).toBe(200);
    await readResetCode(email, 0, stack.logFile);
    await stack.sql`delete from app.users where id = ${account.payload.id}`;
    const [left] = await stack.sql<{ counts: number; mails: number }[]>`
      select (select count(*)::int from app.rate_limits where email = ${email} or key = ${account.payload.id}) as counts,
             (select count(*)::int from app.mail_outbox where recipient = ${email}) as mails`;
    expect(left).toEqual({ counts: 0, mails: 0 });
  });

  it("racing note writes answers each 2xx, 401 or 404, never 500, and leaves no note of the account", async () => {
    for (let round = 0; round < 10; round++) {
      const email = uniqueEmail("racing");
      const account = await register(email);
      const token = account.accessToken;
      const existing = await stack.call("/notes-create", { token, body: { title: "to save and delete" } });
      const id = (existing.body as { data: { id: string } }).data.id;
      const writes = [
        ...Array.from({ length: 15 }, () => stack.call("/notes-create", { token, body: { title: "racing" } })),
        ...Array.from({ length: 5 }, () => stack.call("/notes-save", { token, body: { id, title: "saved" } })),
        stack.call(`/notes-delete?id=${id}`, { token, method: "DELETE" }),
      ];
      const deleted = stack.call("/auth/delete-account", { token, body: { password } });
      const statuses = (await Promise.all(writes)).map((answer) => answer.status);
      expect((await deleted).status).toBe(200);
      expect(statuses.filter((status) => ![200, 201, 401, 404].includes(status)), `round ${round}`).toEqual([]);
      const [left] = await stack.sql<{ notes: number }[]>`
        select count(*)::int as notes from public.notes where created_by = ${account.payload.id}`;
      expect(left.notes).toBe(0);
    }
  }, 60_000);
});
