/**
 * Brute-force limits, on stacks of their own: the run's shared stack relaxes
 * them (every suite calls from 127.0.0.1). One stack keeps every production
 * default and trusts `x-forwarded-for`, so each test can be its own client
 * address; another keeps the default of not trusting it. Instead of waiting
 * out a window, a test moves the window's start into the past with SQL, as the
 * passing of time would.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readResetCode, uniqueEmail } from "./support/api.ts";
import { expectAuthError, expectSession } from "./support/auth.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";

const password = "correct horse battery";
// Cheap hashes: these tests make many logins, and the cost is not what they are about.
const fastHashing = { BCRYPT_COST: "4" };

let defaults: ScratchStack;
let untrusting: ScratchStack;

beforeAll(async () => {
  [defaults, untrusting] = await Promise.all([
    startScratchStack("limits_defaults", { env: { ...fastHashing, TRUST_PROXY: "true" } }),
    startScratchStack("limits_untrusting", {
      env: { ...fastHashing, LOGIN_MAX_ATTEMPTS_PER_ADDRESS: "3", RESET_MAIL_MIN_INTERVAL_SECONDS: "0" },
    }),
  ]);
});

afterAll(async () => {
  await Promise.all([defaults?.stop(), untrusting?.stop()]);
});

/** A client address no other test uses. */
function freshAddress(): string {
  const bytes = randomUUID().replaceAll("-", "");
  return `2001:db8::${bytes.slice(0, 4)}:${bytes.slice(4, 8)}`;
}

async function register(stack: ScratchStack, label: string) {
  const email = uniqueEmail(label);
  const response = await stack.call("/auth/register", { body: { name: label, email, password } });
  expect(response.status, response.text).toBe(201);
  return email;
}

function login(stack: ScratchStack, email: string, secret: string, address: string) {
  return stack.call("/auth/login", { body: { email, password: secret }, headers: { "x-forwarded-for": address } });
}

/** Seconds of `Retry-After`, after checking it is a whole number of seconds. */
function retryAfterOf(response: { headers: Headers }): number {
  const value = response.headers.get("retry-after") ?? "";
  expect(value).toMatch(/^\d+$/);
  return Number(value);
}

describe("login throttling per email", () => {
  it("answers 429 with Retry-After after 5 failures in 15 minutes, even for the right password", async () => {
    const email = await register(defaults, "lock");
    const address = freshAddress();
    for (let attempt = 1; attempt <= 5; attempt++) {
      expectAuthError(await login(defaults, email, "wrong password", address), 401);
    }
    const locked = await login(defaults, email, password, address);
    expect(expectAuthError(locked, 429).message).toMatch(/too many/i);
    expect(locked.headers.get("cache-control")).toBe("no-store");
    // The window opened at the first failure, moments ago: the lock lasts (nearly) the whole 15 minutes.
    expect(retryAfterOf(locked)).toBeGreaterThan(14 * 60);
    expect(retryAfterOf(locked)).toBeLessThanOrEqual(15 * 60);
    // The lock is the email's, whichever address asks.
    expectAuthError(await login(defaults, email, password, freshAddress()), 429);

    // Fifteen minutes pass.
    await defaults.sql`
      update app.login_throttle set window_started_at = window_started_at - interval '15 minutes'
      where scope = 'email' and key = ${email}`;
    expectSession(await login(defaults, email, password, address), 200);
  });

  it("locks an unknown email the same way, so a 429 tells nothing about accounts", async () => {
    const email = uniqueEmail("nobody");
    const address = freshAddress();
    for (let attempt = 1; attempt <= 5; attempt++) {
      expectAuthError(await login(defaults, email, password, address), 401);
    }
    expectAuthError(await login(defaults, email, password, address), 429);
  });

  it("starts the count afresh after a successful login", async () => {
    const email = await register(defaults, "reset-count");
    const address = freshAddress();
    for (let attempt = 1; attempt <= 4; attempt++) {
      expectAuthError(await login(defaults, email, "wrong password", address), 401);
    }
    expectSession(await login(defaults, email, password, address), 200);
    // Without the reset, the second of these would already be the sixth failure.
    for (let attempt = 1; attempt <= 5; attempt++) {
      expectAuthError(await login(defaults, email, "wrong password", address), 401);
    }
    expectAuthError(await login(defaults, email, password, address), 429);
  });

  it("lets no concurrent burst of guesses past the limit", async () => {
    const email = await register(defaults, "burst");
    const address = freshAddress();
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => login(defaults, email, "wrong password", address)),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses.filter((status) => status === 401)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(7);
  });
});

describe("login throttling per client address", () => {
  it("answers 429 after 30 attempts in 5 minutes from one address, taken from the first x-forwarded-for hop", async () => {
    const address = freshAddress();
    for (let attempt = 1; attempt <= 30; attempt++) {
      expectAuthError(await login(defaults, uniqueEmail("spray"), password, address), 401);
    }
    const limited = await login(defaults, uniqueEmail("spray"), password, `${address}, 10.0.0.1`);
    expectAuthError(limited, 429);
    expect(retryAfterOf(limited)).toBeGreaterThan(4 * 60);
    expect(retryAfterOf(limited)).toBeLessThanOrEqual(5 * 60);
    // Another client, even one behind the same last proxy hop, is not held back.
    expectAuthError(await login(defaults, uniqueEmail("spray"), password, `${freshAddress()}, 10.0.0.1`), 401);

    // Five minutes pass.
    await defaults.sql`
      update app.login_throttle set window_started_at = window_started_at - interval '5 minutes'
      where scope = 'address' and key = ${address}`;
    expectAuthError(await login(defaults, uniqueEmail("spray"), password, address), 401);
  });

  it("ignores x-forwarded-for unless TRUST_PROXY is set, so a client cannot pick a fresh address", async () => {
    // This stack allows 3 attempts per address and trusts no proxy: every request is 127.0.0.1's.
    for (let attempt = 1; attempt <= 3; attempt++) {
      expectAuthError(await login(untrusting, uniqueEmail("forged"), password, freshAddress()), 401);
    }
    expectAuthError(await login(untrusting, uniqueEmail("forged"), password, freshAddress()), 429);
  });
});

describe("reset-code mails", () => {
  async function requestReset(stack: ScratchStack, email: string) {
    const response = await stack.call("/auth/request-password-reset", { body: { email } });
    expect(response.status, response.text).toBe(200);
    return response.body;
  }

  async function mailsTo(stack: ScratchStack, email: string): Promise<number> {
    const [row] = await stack.sql<{ count: number }[]>`
      select count(*)::int as count from app.mail_outbox where recipient = ${email}`;
    return row.count;
  }

  function setPassword(stack: ScratchStack, email: string, code: string) {
    return stack.call("/auth/create-password", { body: { email, password: "a new password", code } });
  }

  it("sends at most one mail a minute, answering the same 200 and keeping the code that was sent", async () => {
    const email = await register(defaults, "spaced");
    const storedCode = async () => {
      const [row] = await defaults.sql<{ code_hash: string }[]>`
        select code_hash from app.password_reset_codes
        where user_id = (select id from app.users where email = ${email})`;
      return row.code_hash;
    };
    const first = await requestReset(defaults, email);
    const code = await readResetCode(email, 0, defaults.logFile);
    const firstHash = await storedCode();
    expect(await requestReset(defaults, email)).toEqual(first);
    expect(await mailsTo(defaults, email)).toBe(1);
    expect(await storedCode()).toBe(firstHash);

    // A minute passes: the next request mails a new code, which replaces the first.
    await defaults.sql`
      update app.reset_mail_quota set last_sent_at = last_sent_at - interval '61 seconds'
      where user_id = (select id from app.users where email = ${email})`;
    expect(await requestReset(defaults, email)).toEqual(first);
    expect(await mailsTo(defaults, email)).toBe(2);
    expect(await storedCode()).not.toBe(firstHash);
    const replacement = await readResetCode(email, 1, defaults.logFile);
    expect(code).toMatch(/^\d{6}$/);
    expectSession(await setPassword(defaults, email, replacement), 200);
  });

  it("sends at most 5 mails an hour", async () => {
    // This stack has no minimum interval, so only the hourly allowance holds requests back.
    const email = await register(untrusting, "hourly");
    const answers = [];
    for (let request = 1; request <= 7; request++) answers.push(await requestReset(untrusting, email));
    expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(1);
    expect(await mailsTo(untrusting, email)).toBe(5);

    // The hour passes.
    await untrusting.sql`
      update app.reset_mail_quota set window_started_at = window_started_at - interval '1 hour'
      where user_id = (select id from app.users where email = ${email})`;
    await requestReset(untrusting, email);
    expect(await mailsTo(untrusting, email)).toBe(6);
  });
});
