/**
 * Brute-force limits, on stacks of their own: the run's shared stack relaxes
 * them (every suite calls from 127.0.0.1). One stack keeps every production
 * default and trusts `x-forwarded-for`, so each test can be its own client
 * address; another keeps the default of not trusting it. Instead of waiting
 * out a window, a test moves the window's start into the past with SQL, as the
 * passing of time would.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNotesClient, NotesApiError } from "../shared/index.ts";
import { anonKey, freshAddress, readResetCode, uniqueEmail } from "./support/api.ts";
import { expectAuthError, expectSession } from "./support/auth.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";
import { addressBucket } from "../supabase/functions/_shared/http/address-bucket.ts";

const password = "correct horse battery";
// Cheap hashes: these tests make many logins, and the cost is not what they are about.
const fastHashing = { BCRYPT_COST: "4" };

let defaults: ScratchStack;
let untrusting: ScratchStack;
let short: ScratchStack;

beforeAll(async () => {
  [defaults, untrusting, short] = await Promise.all([
    startScratchStack("limits_defaults", { env: { ...fastHashing, TRUST_PROXY: "true" } }),
    startScratchStack("limits_untrusting", {
      env: { ...fastHashing, LOGIN_MAX_ATTEMPTS_PER_ADDRESS: "3", RESET_MAIL_MIN_INTERVAL_SECONDS: "0" },
    }),
    // Windows of one second, to watch expired counts go away (no proxy trusted: all from 127.0.0.1).
    startScratchStack("limits_short", {
      env: {
        ...fastHashing,
        LOGIN_FAILURE_WINDOW_SECONDS: "1",
        LOGIN_ADDRESS_WINDOW_SECONDS: "1",
        LOGIN_ACCOUNT_WINDOW_SECONDS: "1",
        LOGIN_MAX_ATTEMPTS_PER_ADDRESS: "1000000",
      },
    }),
  ]);
});

afterAll(async () => {
  await Promise.all([defaults?.stop(), untrusting?.stop(), short?.stop()]);
});

/** An account made from an address of its own, so sign-ups never reach the per-address limit these tests share. */
async function register(stack: ScratchStack, label: string) {
  const email = uniqueEmail(label);
  const response = await stack.call("/auth/register", {
    body: { name: label, email, password },
    headers: { "x-forwarded-for": freshAddress() },
  });
  expect(response.status, response.text).toBe(201);
  return email;
}

function login(stack: ScratchStack, email: string, secret: string, address: string) {
  return stack.call("/auth/login", { body: { email, password: secret }, headers: { "x-forwarded-for": address } });
}

/**
 * A wrong password the service took. A 503 (a database deadline or the password steps' admission, on a busy machine)
 * is an attempt it turned away before counting it, so a guess answered 503 left the account's count one short and the
 * right password got in where 429 was expected. It is sent again, as a guesser would.
 */
async function guessWrong(stack: ScratchStack, email: string, guess: string, address: string) {
  for (let attempt = 1;; attempt++) {
    const answer = await login(stack, email, guess, address);
    if (answer.status !== 503 || attempt === 5) return answer;
  }
}

/** Seconds of `Retry-After`, after checking it is a whole number of seconds. */
function retryAfterOf(response: { headers: Headers }): number {
  const value = response.headers.get("retry-after") ?? "";
  expect(value).toMatch(/^\d+$/);
  return Number(value);
}

describe("login throttling per email and address", () => {
  it("answers 429 with Retry-After after 5 failures in 15 minutes from one address, even for the right password", async () => {
    const email = await register(defaults, "lock");
    const address = freshAddress();
    for (let attempt = 1; attempt <= 5; attempt++) {
      expectAuthError(await login(defaults, email, "wrong password", address), 401);
    }
    const locked = await login(defaults, email, password, address);
    expect(expectAuthError(locked, 429).message).toMatch(/too many/i);
    expect(locked.headers.get("cache-control")).toBe("no-store");
    // The window opened at the first failure, moments ago: the wait lasts (nearly) the whole 15 minutes.
    expect(retryAfterOf(locked)).toBeGreaterThan(14 * 60);
    expect(retryAfterOf(locked)).toBeLessThanOrEqual(15 * 60);

    // Fifteen minutes pass.
    await defaults.sql`
      update app.rate_limits set window_ends_at = now() - interval '1 second'
      where bucket = 'login-failure' and email = ${email}`;
    expectSession(await login(defaults, email, password, address), 200);
  });

  it("reaches the typed client as a NotesApiError with retryAfter in seconds", async () => {
    const email = await register(defaults, "client-lock");
    const address = freshAddress();
    // The app's own fetch, as behind a proxy that names the client's address.
    const client = createNotesClient({
      url: defaults.baseUrl,
      anonKey,
      fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, "x-forwarded-for": address } }),
    });
    for (let attempt = 1; attempt <= 5; attempt++) {
      await expect(client.login({ email, password: "wrong password" })).rejects.toMatchObject({ status: 401 });
    }
    const error = await client.login({ email, password }).catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(NotesApiError);
    expect(error).toMatchObject({ status: 429, retryAfter: expect.any(Number) });
    expect((error as NotesApiError).retryAfter).toBeGreaterThan(14 * 60);
  });

  it("never refuses the right password from another address: no one can lock a victim out from afar", async () => {
    const victim = await register(defaults, "victim");
    const attacker = freshAddress();
    for (let attempt = 1; attempt <= 8; attempt++) await login(defaults, victim, "guess", attacker);
    expectAuthError(await login(defaults, victim, password, attacker), 429);
    expectSession(await login(defaults, victim, password, freshAddress()), 200);
  });

  it("counts no refused attempt: an address over its limit stops adding to its counts", async () => {
    const email = await register(defaults, "uncounted");
    const address = freshAddress();
    for (let attempt = 1; attempt <= 5; attempt++) await login(defaults, email, "wrong password", address);
    for (let attempt = 1; attempt <= 5; attempt++) {
      expectAuthError(await login(defaults, email, "wrong password", address), 429);
    }
    const [pair] = await defaults.sql<{ hits: number }[]>`
      select hits from app.rate_limits where bucket = 'login-failure' and email = ${email}`;
    expect(pair.hits).toBe(5);
    const [perAddress] = await defaults.sql<{ hits: number }[]>`
      select hits from app.rate_limits where bucket = 'login-address' and key = ${addressBucket(address) ?? address}`;
    expect(perAddress.hits).toBe(5);
  });

  it("limits an unknown email the same way, so a 429 tells nothing about accounts", async () => {
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

  it("lifts every address's failures of the email once its owner sets a new password with a code", async () => {
    const email = await register(defaults, "lifted");
    const address = freshAddress();
    for (let attempt = 1; attempt <= 5; attempt++) await login(defaults, email, "wrong password", address);
    expectAuthError(await login(defaults, email, password, address), 429);
    const request = await defaults.call("/auth/request-password-reset", { body: { email } });
    expect(request.status).toBe(200);
    const code = await readResetCode(email, 0, defaults.logFile);
    const newPassword = "a newer passphrase";
    expectSession(
      await defaults.call("/auth/create-password", {
        body: { email, password: newPassword, code },
        headers: { "x-forwarded-for": freshAddress() },
      }),
      200,
    );
    expectSession(await login(defaults, email, newPassword, address), 200);
  });

  it("lets no concurrent burst of guesses past the limit, not even the first burst of a pair", async () => {
    // A pair's first guesses find no counter row to lock, so each round races on creating it.
    for (let round = 0; round < 20; round++) {
      const email = await register(defaults, `burst-${round}`);
      const address = freshAddress();
      const answers = await Promise.all(
        Array.from({ length: 12 }, () => login(defaults, email, "wrong password", address)),
      );
      const statuses = answers.map((answer) => answer.status);
      expect(statuses.filter((status) => status === 401), `round ${round}`).toHaveLength(5);
      expect(statuses.filter((status) => status === 429), `round ${round}`).toHaveLength(7);
    }
  });
});

describe("guessing at one account from many addresses", () => {
  it("caps 200 guesses from 40 addresses at 20, refuses a new device the right password, and admits the owner's device", async () => {
    const email = await register(defaults, "target");
    const owner = expectSession(
      await defaults.call("/auth/login", { body: { email, password }, headers: { "x-forwarded-for": freshAddress() } }),
      200,
    );
    expect(owner.deviceToken).toMatch(/\S+/);

    const statuses: number[] = [];
    for (let address = 0; address < 40; address++) {
      const from = freshAddress();
      for (let guess = 0; guess < 5; guess++) {
        statuses.push((await guessWrong(defaults, email, `guess ${guess}`, from)).status);
      }
    }
    // Each address stayed within its own 5 failures; the account's count stopped the guessing at 20.
    expect(statuses.filter((status) => status === 401)).toHaveLength(20);
    expect(statuses.filter((status) => status === 429)).toHaveLength(180);

    const newDevice = await login(defaults, email, password, freshAddress());
    expect(expectAuthError(newDevice, 429).message).toBe("Too many login attempts; try again later");
    expect(retryAfterOf(newDevice)).toBeGreaterThan(50 * 60);
    // One character of the MAC changed, one that carries 6 of its bits: overwriting the last two with "AA" (as this
    // test once did) left about one token in a thousand as it was, and the owner's genuine token was let in.
    const [signedPart, mac] = [owner.deviceToken!.slice(0, -43), owner.deviceToken!.slice(-43)];
    const forged = `${signedPart}${mac.startsWith("A") ? "B" : "A"}${mac.slice(1)}`;
    for (const deviceToken of [forged, "not a device token"]) {
      const refused = await defaults.call("/auth/login", {
        body: { email, password, deviceToken },
        headers: { "x-forwarded-for": freshAddress() },
      });
      expectAuthError(refused, 429);
    }
    // Another account's genuine device token does not open this one.
    const stranger = await register(defaults, "stranger");
    const strangers = expectSession(await login(defaults, stranger, password, freshAddress()), 200);
    const borrowed = await defaults.call("/auth/login", {
      body: { email, password, deviceToken: strangers.deviceToken },
      headers: { "x-forwarded-for": freshAddress() },
    });
    expectAuthError(borrowed, 429);

    const admitted = await defaults.call("/auth/login", {
      body: { email, password, deviceToken: owner.deviceToken },
      headers: { "x-forwarded-for": freshAddress() },
    });
    expect(expectSession(admitted, 200).payload.email).toBe(email);
  });

  it("lifts the account's cap once its owner sets a new password with a code", async () => {
    const email = await register(defaults, "lifted");
    for (let address = 0; address < 4; address++) {
      const from = freshAddress();
      for (let guess = 0; guess < 5; guess++) {
        expectAuthError(await guessWrong(defaults, email, `guess ${guess}`, from), 401);
      }
    }
    expectAuthError(await login(defaults, email, password, freshAddress()), 429);
    await defaults.call("/auth/request-password-reset", {
      body: { email },
      headers: { "x-forwarded-for": freshAddress() },
    });
    const code = await readResetCode(email, 0, defaults.logFile);
    expectSession(
      await defaults.call("/auth/create-password", {
        body: { email, password: "a new password", code },
        headers: { "x-forwarded-for": freshAddress() },
      }),
      200,
    );
    expectSession(await login(defaults, email, "a new password", freshAddress()), 200);
  });

  it("does not count successful logins toward the cap", async () => {
    const email = await register(defaults, "regular");
    for (let login_ = 0; login_ < 25; login_++) {
      expectSession(await login(defaults, email, password, freshAddress()), 200);
    }
  });
});

describe("login throttling per client address", () => {
  it("answers 429 after 30 attempts in 5 minutes from one address, the x-forwarded-for entry the proxy appended", async () => {
    const address = freshAddress();
    for (let attempt = 1; attempt <= 30; attempt++) {
      // The client writes whatever it likes to the left of what the trusted proxy appended.
      expectAuthError(await login(defaults, uniqueEmail("spray"), password, `${freshAddress()}, ${address}`), 401);
    }
    const limited = await login(defaults, uniqueEmail("spray"), password, `${freshAddress()}, ${address}`);
    expectAuthError(limited, 429);
    expect(retryAfterOf(limited)).toBeGreaterThan(4 * 60);
    expect(retryAfterOf(limited)).toBeLessThanOrEqual(5 * 60);
    // Another client is not held back.
    expectAuthError(await login(defaults, uniqueEmail("spray"), password, freshAddress()), 401);

    // Five minutes pass.
    await defaults.sql`
      update app.rate_limits set window_ends_at = now() - interval '1 second'
      where bucket = 'login-address' and key = ${addressBucket(address) ?? address}`;
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

describe("sign-ups per client address", () => {
  it("answers 429 with Retry-After after 30 sign-ups in 5 minutes from one address, and not for another", async () => {
    const address = freshAddress();
    const signUp = (from: string) =>
      defaults.call("/auth/register", {
        body: { name: "Bulk", email: uniqueEmail("bulk"), password },
        headers: { "x-forwarded-for": from },
      });
    for (let attempt = 1; attempt <= 30; attempt++) expect((await signUp(address)).status).toBe(201);
    const refused = await signUp(address);
    expect(expectAuthError(refused, 429).message).toMatch(/too many sign-ups/i);
    expect(retryAfterOf(refused)).toBeGreaterThan(4 * 60);
    expect((await signUp(freshAddress())).status).toBe(201);
  });
});

describe("reset-code guessing", () => {
  const guess = (email: string, from: string) =>
    defaults.call("/auth/create-password", {
      body: { email, password: "guessed password", code: "000000" },
      headers: { "x-forwarded-for": from },
    });

  it("answers 429 after 30 code attempts in 5 minutes from one address, whichever accounts they name", async () => {
    const address = freshAddress();
    const emails = await Promise.all(Array.from({ length: 3 }, (_, index) => register(defaults, `guessed-${index}`)));
    for (let attempt = 0; attempt < 30; attempt++) {
      expectAuthError(await guess(emails[attempt % 3], address), 400);
    }
    const refused = await guess(emails[0], address);
    expect(expectAuthError(refused, 429).message).toMatch(/too many code attempts/i);
    expect(retryAfterOf(refused)).toBeGreaterThan(4 * 60);
    expectAuthError(await guess(emails[0], freshAddress()), 400);
  });

  it("stops accepting codes for an account after 20 wrong ones in a day, from any addresses", async () => {
    const email = await register(defaults, "guessed-everywhere");
    for (let attempt = 1; attempt <= 20; attempt++) expectAuthError(await guess(email, freshAddress()), 400);
    const request = await defaults.call("/auth/request-password-reset", { body: { email } });
    expect(request.status).toBe(200);
    const code = await readResetCode(email, 0, defaults.logFile);
    const refused = await defaults.call("/auth/create-password", {
      body: { email, password: "a newer passphrase", code },
      headers: { "x-forwarded-for": freshAddress() },
    });
    expectAuthError(refused, 429);
    expect(retryAfterOf(refused)).toBeGreaterThan(23 * 3600);
  });
});

describe("reset requests per client address", () => {
  it("answers 429 with Retry-After after 30 requests in 5 minutes from one address, and not for another", async () => {
    const address = freshAddress();
    const request = (from: string) =>
      defaults.call("/auth/request-password-reset", {
        body: { email: uniqueEmail("reset-flood") },
        headers: { "x-forwarded-for": from },
      });
    for (let attempt = 1; attempt <= 30; attempt++) expect((await request(address)).status).toBe(200);
    const refused = await request(address);
    expect(expectAuthError(refused, 429).message).toMatch(/too many reset requests/i);
    expect(retryAfterOf(refused)).toBeGreaterThan(4 * 60);
    expect((await request(freshAddress())).status).toBe(200);
  });
});

describe("the caller's address from the platform's edge (CLIENT_ADDRESS_HEADER)", () => {
  let edge: ScratchStack;

  beforeAll(async () => {
    edge = await startScratchStack("limits_edge", {
      env: { ...fastHashing, CLIENT_ADDRESS_HEADER: "cf-connecting-ip", LOGIN_MAX_ATTEMPTS_PER_ADDRESS: "3" },
    });
  });

  afterAll(async () => {
    await edge?.stop();
  });

  const loginFrom = (headers: Record<string, string>) =>
    edge.call("/auth/login", { body: { email: uniqueEmail("edge"), password }, headers });

  it("limits each cf-connecting-ip, whatever x-forwarded-for says", async () => {
    for (let attempt = 1; attempt <= 3; attempt++) {
      expectAuthError(await loginFrom({ "cf-connecting-ip": "198.51.100.7", "x-forwarded-for": freshAddress() }), 401);
    }
    expectAuthError(await loginFrom({ "cf-connecting-ip": "198.51.100.7", "x-forwarded-for": freshAddress() }), 429);
    expectAuthError(await loginFrom({ "cf-connecting-ip": "198.51.100.8" }), 401);
  });

  it("counts IPv6 callers by their /64: a fresh address in the same network is the same client", async () => {
    for (const host of ["1", "2", "abcd:1234"]) {
      expectAuthError(await loginFrom({ "cf-connecting-ip": `2001:db8:aa:bb::${host}` }), 401);
    }
    expectAuthError(await loginFrom({ "cf-connecting-ip": "2001:db8:aa:bb:ffff:ffff:ffff:fffe" }), 429);
    expectAuthError(await loginFrom({ "cf-connecting-ip": "2001:db8:aa:bc::1" }), 401);
  });
});

describe("reset-code mails", () => {
  /** Requests a reset and waits until the stack's mail drain has resolved it (the queue is empty). */
  async function requestReset(stack: ScratchStack, email: string) {
    const response = await stack.call("/auth/request-password-reset", { body: { email } });
    expect(response.status, response.text).toBe(200);
    for (const deadline = Date.now() + 5_000; Date.now() < deadline;) {
      const [{ queued }] = await stack.sql<{ queued: number }[]>`
        select count(*)::int as queued from app.password_reset_requests`;
      if (queued === 0) return response.body;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error("the reset request was not resolved within 5 s");
  }

  async function mailsTo(stack: ScratchStack, email: string): Promise<number> {
    const [row] = await stack.sql<{ count: number }[]>`
      select count(*)::int as count from app.mail_outbox
      where recipient = ${email} and subject = 'Your password reset code'`;
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

describe("what the limits keep", () => {
  it("stays bounded: a sweep of unknown emails leaves about one window's worth of rows, with no cron", async () => {
    const sweep = async (size: number) => {
      for (let batch = 0; batch < size; batch += 25) {
        await Promise.all(
          Array.from({ length: 25 }, () => login(short, uniqueEmail("sweep"), password, freshAddress())),
        );
      }
    };
    const rows = async () =>
      (await short.sql<{ count: number }[]>`select count(*)::int as count from app.rate_limits`)[0].count;
    // 300 unknown emails, each two rows of its own (its failures from the address, and the account's) while
    // their one-second windows last. Each new count removes up to two expired rows, so the table never holds
    // much more than one window's worth (kept forever, there would be 600 and more).
    await sweep(150);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await sweep(150);
    expect(await rows()).toBeLessThanOrEqual(302);
  });
});
