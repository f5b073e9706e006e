/**
 * Passkeys over HTTP, with a software authenticator (`support/passkey-authenticator.ts`) answering the real
 * ceremonies: registering needs a proof given for it, a passkey signs in with no email typed at aal2, completes the
 * second step and proves its owner; challenges are single use, expire, and one of many racing verifications wins;
 * a counter that goes back is refused and logged, a synced passkey's 0 is accepted; the last way in stays; a reset
 * drops what was added while the address was unproven. On a stack of its own that trusts `x-forwarded-for`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { passkeyAnswer, passkeyList, passkeyOptions } from "../supabase/functions/_shared/contract/mod.ts";
import { createNotesClient } from "../shared/index.ts";
import { anonKey, freshAddress, readResetCode, stackLog, uniqueEmail, waitForLog } from "./support/api.ts";
import { decodeAccessToken, expectSession } from "./support/auth.ts";
import { grantAdmin } from "./support/admin.ts";
import { expectErrorCode } from "./support/error-codes.ts";
import { SoftAuthenticator } from "../dev/harness/passkey-authenticator.ts";
import { awayFromStepEdge, codeOf, enrolledAccount, verifyAddress } from "./support/second-factor.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";

let stack: ScratchStack;

beforeAll(async () => {
  stack = await startScratchStack("passkeys", {
    env: { BCRYPT_COST: "4", TRUST_PROXY: "true", RESET_MAIL_MIN_INTERVAL_SECONDS: "0" },
  });
});

afterAll(async () => {
  await stack?.stop();
});

const password = "correct horse battery";

function post(path: string, body: unknown, token?: string) {
  return stack.call(path, { body, token, headers: { "x-forwarded-for": freshAddress() } });
}

function send(method: string, path: string, token: string, body?: unknown) {
  return stack.call(path, { method, body, token, headers: { "x-forwarded-for": freshAddress() } });
}

/** Waits until the stack has printed a mail to `email` with `subject`. */
async function expectMail(email: string, subject: string): Promise<void> {
  await waitForLog((log) => log.includes(`to=${email} subject="${subject}"`) || undefined, subject, stack.logFile);
}

/** What `read` answers once it answers something, read again until then (within vitest's timeout). */
async function eventually<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function optionsOf(response: Awaited<ReturnType<typeof post>>) {
  expect(response.status, response.text).toBe(200);
  return passkeyOptions.parse((response.body as { data: unknown }).data).options;
}

async function newAccount(label: string, options: { verified?: boolean } = {}) {
  const email = uniqueEmail(label);
  const session = expectSession(await post("/auth/register", { name: label, email, password }), 201);
  if (options.verified) await verifyAddress(stack, email, session.accessToken);
  return { email, accessToken: session.accessToken, userId: session.payload.id };
}

async function reauthenticate(token: string): Promise<void> {
  const proof = await post("/auth/reauthenticate", { password }, token);
  expect(proof.status, proof.text).toBe(200);
}

/** Registers a passkey of `authenticator` for the signed-in account, with the password re-entered first (unless `proven`). */
async function registerPasskey(token: string, authenticator: SoftAuthenticator, name?: string, proven = false) {
  if (!proven) await reauthenticate(token);
  // deno-lint-ignore no-explicit-any
  const options = optionsOf(await post("/auth/passkeys/register/options", {}, token)) as any;
  const registered = await post("/auth/passkeys/register", { response: authenticator.create(options), name }, token);
  expect(registered.status, registered.text).toBe(201);
  return passkeyAnswer.parse((registered.body as { data: unknown }).data).passkey;
}

// deno-lint-ignore no-explicit-any
async function signInOptions(token?: string): Promise<any> {
  return optionsOf(await post("/auth/passkeys/login/options", {}, token));
}

describe("registering a passkey", () => {
  it("needs a proof given for it: a bare token is refused, the password re-entered lets it through", async () => {
    const account = await newAccount("bare-token", { verified: true });
    const bare = await post("/auth/passkeys/register/options", {}, account.accessToken);
    expectErrorCode(bare, "reauthentication_required");
    // Options taken while a proof held are no use to a session whose proof has gone: the statement checks again.
    const authenticator = new SoftAuthenticator();
    await reauthenticate(account.accessToken);
    const options = await optionsOf(await post("/auth/passkeys/register/options", {}, account.accessToken));
    await stack.sql`update app.sessions set reauthenticated_at = now() - interval '6 minutes'
                    where user_id = ${account.userId} and reauthenticated_at is not null`;
    const late = await post(
      "/auth/passkeys/register",
      // deno-lint-ignore no-explicit-any
      { response: authenticator.create(options as any) },
      account.accessToken,
    );
    expectErrorCode(late, "reauthentication_required");
    const passkey = await registerPasskey(account.accessToken, authenticator, "Laptop");
    expect(passkey).toMatchObject({ name: "Laptop", lastUsedAt: null, synced: false, authenticator: null });
    await expectMail(account.email, "A passkey was added to your account");
    const [event] = await stack.sql`select details from app.security_events
                                    where user_id = ${account.userId} and type = 'passkey_added'`;
    expect(event.details).toMatchObject({ passkeyId: passkey.id, name: "Laptop" });
  });

  it("excludes the account's passkeys and stops at 10", async () => {
    const account = await newAccount("ten-passkeys", { verified: true });
    const authenticator = new SoftAuthenticator();
    await reauthenticate(account.accessToken);
    for (let index = 0; index < 9; index += 1) {
      await registerPasskey(account.accessToken, authenticator, undefined, true);
    }
    // deno-lint-ignore no-explicit-any
    const options = optionsOf(await post("/auth/passkeys/register/options", {}, account.accessToken)) as any;
    expect(options.excludeCredentials.map((entry: { id: string }) => entry.id)).toEqual(
      authenticator.credentials.map((credential) => credential.id),
    );
    const tenth = await post(
      "/auth/passkeys/register",
      { response: authenticator.create(options) },
      account.accessToken,
    );
    expect(tenth.status, tenth.text).toBe(201);
    const more = await post("/auth/passkeys/register/options", {}, account.accessToken);
    expectErrorCode(more, "passkey_limit_reached");
    const list = await send("GET", "/auth/passkeys", account.accessToken);
    expect(passkeyList.parse((list.body as { data: unknown }).data).passkeys).toHaveLength(10);
  });

  it("refuses an authenticator that does not verify its user", async () => {
    const account = await newAccount("no-uv", { verified: true });
    await reauthenticate(account.accessToken);
    // deno-lint-ignore no-explicit-any
    const options = optionsOf(await post("/auth/passkeys/register/options", {}, account.accessToken)) as any;
    const response = new SoftAuthenticator({ userVerification: false }).create(options);
    expectErrorCode(await post("/auth/passkeys/register", { response }, account.accessToken), "passkey_invalid");
  });

  it("spends the challenge once: a second registration with it is refused", async () => {
    const account = await newAccount("register-twice", { verified: true });
    await reauthenticate(account.accessToken);
    // deno-lint-ignore no-explicit-any
    const options = optionsOf(await post("/auth/passkeys/register/options", {}, account.accessToken)) as any;
    const authenticator = new SoftAuthenticator();
    const first = await post(
      "/auth/passkeys/register",
      { response: authenticator.create(options) },
      account.accessToken,
    );
    expect(first.status, first.text).toBe(201);
    const again = await post(
      "/auth/passkeys/register",
      { response: authenticator.create(options) },
      account.accessToken,
    );
    expectErrorCode(again, "passkey_invalid");
  });
});

describe("signing in with a passkey", () => {
  it("signs in with no email typed, at aal2 with amr passkey, and notes work at once despite a TOTP factor", async () => {
    const enrolled = await enrolledAccount(stack, "passkey-totp", password);
    const authenticator = new SoftAuthenticator();
    await registerPasskey(enrolled.accessToken, authenticator);
    const options = await signInOptions();
    expect(options.allowCredentials ?? []).toEqual([]);
    const session = expectSession(await post("/auth/passkeys/login", { response: authenticator.get(options) }), 200);
    expect(session.payload.id).toBe(enrolled.userId);
    expect(session.mfaRequired).toBe(false);
    expect(session.deviceToken).toBeTruthy();
    const { claims } = decodeAccessToken(session.accessToken);
    expect(claims.aal).toBe("aal2");
    expect((claims.amr as { method: string }[]).map((entry) => entry.method)).toEqual(["passkey"]);
    const note = await stack.call("/notes-create", { body: { title: "at once" }, token: session.accessToken });
    expect(note.status, note.text).toBe(201);
    // The session's level is the session row's, as for TOTP.
    const [row] = await stack.sql`select aal, second_factor, signed_in_with from app.sessions
                                  where id = ${String(claims.session_id)}`;
    expect(row).toEqual({ aal: "aal2", second_factor: "passkey_sign_in", signed_in_with: "passkey" });
    const [used] = await stack.sql`select last_used_at from app.passkeys where user_id = ${enrolled.userId}`;
    expect(used.last_used_at).not.toBeNull();
  });

  it("completes the second step after a password as a code does", async () => {
    const enrolled = await enrolledAccount(stack, "passkey-second-step", password);
    const authenticator = new SoftAuthenticator();
    await registerPasskey(enrolled.accessToken, authenticator);
    const first = expectSession(await post("/auth/login", { email: enrolled.email, password }), 200);
    expect(first.mfaRequired).toBe(true);
    const options = await signInOptions(first.accessToken);
    expect(options.allowCredentials.map((entry: { id: string }) => entry.id)).toEqual([
      authenticator.credentials[0].id,
    ]);
    const second = expectSession(
      await post("/auth/passkeys/login", { response: authenticator.get(options) }, first.accessToken),
      200,
    );
    const { claims } = decodeAccessToken(second.accessToken);
    expect(claims.aal).toBe("aal2");
    expect((claims.amr as { method: string }[]).map((entry) => entry.method)).toEqual(["password", "passkey"]);
    // The aal1 session ended with the step.
    expectErrorCode(await send("GET", "/auth/user", first.accessToken), "token_revoked");
    const notes = await stack.call("/notes-fetch", { token: second.accessToken });
    expect(notes.status, notes.text).toBe(200);
  });

  it("takes no other account's passkey for the second step", async () => {
    const enrolled = await enrolledAccount(stack, "second-step-owner", password);
    await registerPasskey(enrolled.accessToken, new SoftAuthenticator());
    const stranger = await newAccount("second-step-stranger", { verified: true });
    const strangersKey = new SoftAuthenticator();
    await registerPasskey(stranger.accessToken, strangersKey);
    const first = expectSession(await post("/auth/login", { email: enrolled.email, password }), 200);
    const options = await signInOptions(first.accessToken);
    const foreign = strangersKey.get(options, { credential: strangersKey.credentials[0] });
    expectErrorCode(await post("/auth/passkeys/login", { response: foreign }, first.accessToken), "passkey_rejected");
    expect((await send("GET", "/auth/user", first.accessToken)).status).toBe(200);
  });

  it("refuses an assertion without user verification", async () => {
    const account = await newAccount("assert-no-uv", { verified: true });
    const authenticator = new SoftAuthenticator();
    await registerPasskey(account.accessToken, authenticator);
    authenticator.userVerification = false;
    const refused = await post("/auth/passkeys/login", { response: authenticator.get(await signInOptions()) });
    expectErrorCode(refused, "passkey_rejected");
  });

  it("refuses a replayed assertion and a reused challenge", async () => {
    const account = await newAccount("replay", { verified: true });
    const authenticator = new SoftAuthenticator();
    await registerPasskey(account.accessToken, authenticator);
    const options = await signInOptions();
    const assertion = authenticator.get(options);
    expectSession(await post("/auth/passkeys/login", { response: assertion }), 200);
    expectErrorCode(await post("/auth/passkeys/login", { response: assertion }), "passkey_rejected");
    // A fresh assertion (a higher counter) for the spent challenge.
    expectErrorCode(await post("/auth/passkeys/login", { response: authenticator.get(options) }), "passkey_rejected");
  });

  it("lets one of 20 concurrent verifications of one challenge through", async () => {
    const account = await newAccount("race", { verified: true });
    const authenticator = new SoftAuthenticator({ synced: true });
    await registerPasskey(account.accessToken, authenticator);
    const options = await signInOptions();
    const assertions = Array.from({ length: 20 }, () => authenticator.get(options));
    const answers = await Promise.all(assertions.map((response) => post("/auth/passkeys/login", { response })));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    for (const answer of answers.filter((answer) => answer.status !== 200)) {
      expectErrorCode(answer, "passkey_rejected");
    }
  });

  it("limits the options asked from one address, as logins are", async () => {
    const headers = { "x-forwarded-for": freshAddress() };
    const ask = () => stack.call("/auth/passkeys/login/options", { body: {}, headers });
    // LOGIN_MAX_ATTEMPTS_PER_ADDRESS (30) in its window; another address is not held up.
    for (let index = 0; index < 30; index += 1) expect((await ask()).status).toBe(200);
    const refused = await ask();
    expectErrorCode(refused, "rate_limited");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await post("/auth/passkeys/login/options", {})).status).toBe(200);
  });

  it("refuses an expired challenge", async () => {
    const account = await newAccount("expired", { verified: true });
    const authenticator = new SoftAuthenticator();
    await registerPasskey(account.accessToken, authenticator);
    const options = await signInOptions();
    await stack.sql`update app.passkey_challenges set expires_at = now() - interval '1 second'
                    where purpose = 'sign_in'`;
    expectErrorCode(await post("/auth/passkeys/login", { response: authenticator.get(options) }), "passkey_rejected");
  });

  it("refuses a device-bound counter that goes back, and logs it; accepts a synced passkey's 0", async () => {
    const account = await newAccount("counter", { verified: true });
    const deviceBound = new SoftAuthenticator();
    await registerPasskey(account.accessToken, deviceBound);
    expectSession(await post("/auth/passkeys/login", { response: deviceBound.get(await signInOptions()) }), 200);
    expectSession(await post("/auth/passkeys/login", { response: deviceBound.get(await signInOptions()) }), 200);
    const cloned = deviceBound.get(await signInOptions(), { counter: 1 });
    expectErrorCode(await post("/auth/passkeys/login", { response: cloned }), "passkey_rejected");
    const [event] = await stack.sql`select details from app.security_events
                                    where user_id = ${account.userId} and type = 'passkey_counter_regressed'`;
    expect(event.details).toMatchObject({ storedCount: 2, presentedCount: 1 });

    const synced = new SoftAuthenticator({ synced: true });
    const passkey = await registerPasskey(account.accessToken, synced);
    expect(passkey.synced).toBe(true);
    for (let time = 0; time < 2; time += 1) {
      expectSession(await post("/auth/passkeys/login", { response: synced.get(await signInOptions()) }), 200);
    }
  });

  it("signs nobody in with another user's credential id, and counts the wrong signature against that account", async () => {
    const victim = await newAccount("victim", { verified: true });
    const victimsKey = new SoftAuthenticator();
    await registerPasskey(victim.accessToken, victimsKey);
    const attacker = new SoftAuthenticator();
    attacker.create({ challenge: "x", rp: { id: "localhost" }, user: { id: victimsKey.credentials[0].userHandle } });
    // The attacker's own key, presented under the victim's credential id.
    const forged = attacker.get(await signInOptions());
    const answer = await post("/auth/passkeys/login", { response: { ...forged, id: victimsKey.credentials[0].id } });
    expectErrorCode(answer, "passkey_rejected");
    // Recorded after the answer, as a wrong password is.
    const failure = await eventually(async () => {
      const [row] = await stack.sql`select details from app.security_events
                                    where user_id = ${victim.userId} and type = 'login_failed'`;
      return row?.details;
    });
    expect(failure).toEqual({ method: "passkey", reason: "assertion_refused" });
    const [count] = await stack.sql`select hits from app.rate_limits
                                    where bucket = 'login-account' and key = ${victim.email}`;
    expect(count?.hits).toBe(1);
  });
});

describe("the account's cap of failed sign-ins", () => {
  it("counts wrong signatures as wrong passwords: new devices' passwords wait, the owner's passkey and devices do not", async () => {
    const account = await newAccount("passkey-cap", { verified: true });
    const owners = new SoftAuthenticator();
    await registerPasskey(account.accessToken, owners);
    const known = expectSession(await post("/auth/login", { email: account.email, password }), 200);
    const forger = new SoftAuthenticator();
    forger.create({ challenge: "x", rp: { id: "localhost" }, user: { id: owners.credentials[0].userHandle } });
    // LOGIN_MAX_FAILURES_PER_ACCOUNT (20): each a forged signature under the owner's credential id.
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const forged = { ...forger.get(await signInOptions()), id: owners.credentials[0].id };
      expectErrorCode(await post("/auth/passkeys/login", { response: forged }), "passkey_rejected");
    }
    // Counted after each answer, as a wrong password is.
    await eventually(async () => {
      const [row] = await stack.sql`select hits from app.rate_limits
                                    where bucket = 'login-account' and key = ${account.email}`;
      return row?.hits >= 20 ? true : undefined;
    });
    expectErrorCode(await post("/auth/login", { email: account.email, password }), "rate_limited");
    expectSession(await post("/auth/login", { email: account.email, password, deviceToken: known.deviceToken }), 200);
    expectSession(await post("/auth/passkeys/login", { response: owners.get(await signInOptions()) }), 200);
  });
});

describe("managing passkeys", () => {
  it("lists, renames and removes, with a proof; the owner is mailed", async () => {
    const account = await newAccount("manage", { verified: true });
    const passkey = await registerPasskey(account.accessToken, new SoftAuthenticator(), "Phone");
    const renamed = await send("PATCH", `/auth/passkeys?id=${passkey.id}`, account.accessToken, { name: "Old phone" });
    expect(renamed.status, renamed.text).toBe(200);
    expect(passkeyAnswer.parse((renamed.body as { data: unknown }).data).passkey.name).toBe("Old phone");
    await stack.sql`update app.sessions set reauthenticated_at = null, reauthenticated_with = null
                    where user_id = ${account.userId}`;
    expectErrorCode(
      await send("DELETE", `/auth/passkeys?id=${passkey.id}`, account.accessToken),
      "reauthentication_required",
    );
    await reauthenticate(account.accessToken);
    const removed = await send("DELETE", `/auth/passkeys?id=${passkey.id}`, account.accessToken);
    expect(removed.status, removed.text).toBe(200);
    await expectMail(account.email, "A passkey was removed from your account");
    expectErrorCode(await send("DELETE", `/auth/passkeys?id=${passkey.id}`, account.accessToken), "passkey_not_found");
  });

  it("keeps the last passkey of an account without a password", async () => {
    const account = await newAccount("passwordless", { verified: true });
    const authenticator = new SoftAuthenticator();
    const passkey = await registerPasskey(account.accessToken, authenticator);
    // An account without a password (as one made by a provider whose identity was then unlinked).
    await stack.sql`update app.users set password_hash = null where id = ${account.userId}`;
    const session = expectSession(
      await post("/auth/passkeys/login", { response: authenticator.get(await signInOptions()) }),
      200,
    );
    const options = await signInOptions(session.accessToken);
    const proof = await post("/auth/reauthenticate", { passkey: authenticator.get(options) }, session.accessToken);
    expect(proof.status, proof.text).toBe(200);
    const refused = await send("DELETE", `/auth/passkeys?id=${passkey.id}`, session.accessToken);
    expectErrorCode(refused, "last_sign_in_method");
  });
});

describe("the typed client", () => {
  it("registers, signs in, proves the owner, lists, renames and removes with client.passkeys", async () => {
    const authenticator = new SoftAuthenticator();
    const ceremonies = {
      // deno-lint-ignore no-explicit-any
      create: (options: any) => Promise.resolve(authenticator.create(options)),
      // deno-lint-ignore no-explicit-any
      get: (options: any) => Promise.resolve(authenticator.get(options)),
    };
    const headers = { "x-forwarded-for": freshAddress() };
    const fetchFrom = (input: RequestInfo | URL, init?: RequestInit) =>
      fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), ...headers } });
    const client = createNotesClient({ url: stack.baseUrl, anonKey, fetch: fetchFrom, passkeyCeremonies: ceremonies });
    const email = uniqueEmail("client");
    await client.auth.register({ name: "Client", email, password });
    await client.auth.reauthenticate({ password });
    const added = await client.passkeys.register({ name: "This laptop" });
    expect(added.name).toBe("This laptop");
    await client.auth.signOut();

    const other = createNotesClient({ url: stack.baseUrl, anonKey, fetch: fetchFrom, passkeyCeremonies: ceremonies });
    const session = await other.passkeys.signIn({ autofill: true });
    expect(session.payload.email).toBe(email);
    expect(other.session?.accessToken).toBe(session.accessToken);
    await other.passkeys.reauthenticate();
    expect((await other.passkeys.rename(added.id, "Old laptop")).name).toBe("Old laptop");
    expect((await other.passkeys.list()).map((passkey) => passkey.name)).toEqual(["Old laptop"]);
    await other.passkeys.remove(added.id);
    expect(await other.passkeys.list()).toEqual([]);
  });
});

describe("an admin", () => {
  it("removes another account's lost passkey and ends its sessions, never its own account's", async () => {
    const admin = await enrolledAccount(stack, "passkey-admin", password);
    await grantAdmin(stack, admin.email);
    const user = await newAccount("lost-passkey", { verified: true });
    const passkey = await registerPasskey(user.accessToken, new SoftAuthenticator());
    const removal = await post("/admin-users", { id: user.userId, removePasskey: passkey.id }, admin.accessToken);
    expect(removal.status, removal.text).toBe(200);
    expect(await stack.sql`select from app.passkeys where user_id = ${user.userId}`).toHaveLength(0);
    expectErrorCode(await send("GET", "/auth/passkeys", user.accessToken), "token_revoked");
    await expectMail(user.email, "A passkey was removed from your account");
    const [event] = await stack.sql`select actor_id, details from app.security_events
                                    where user_id = ${user.userId} and type = 'passkey_removed'`;
    expect(event).toMatchObject({ actor_id: admin.userId, details: { passkeyId: passkey.id, byAdmin: true } });

    const own = await registerPasskey(admin.accessToken, new SoftAuthenticator());
    const refused = await post("/admin-users", { id: admin.userId, removePasskey: own.id }, admin.accessToken);
    expectErrorCode(refused, "cannot_remove_own_factor");
  });
});

describe("a password reset", () => {
  it("keeps the passkeys of a proven address and drops those added while it was unproven", async () => {
    const account = await newAccount("reset-keeps");
    const unproven = new SoftAuthenticator();
    await registerPasskey(account.accessToken, unproven, "Before proof");
    await verifyAddress(stack, account.email, account.accessToken);
    await registerPasskey(account.accessToken, new SoftAuthenticator(), "After proof");
    expect((await post("/auth/request-password-reset", { email: account.email })).status).toBe(200);
    const code = await readResetCode(account.email, 0, stack.logFile);
    const reset = expectSession(
      await post("/auth/create-password", { email: account.email, code, password: "a brand new secret" }),
      200,
    );
    const list = await send("GET", "/auth/passkeys", reset.accessToken);
    expect(passkeyList.parse((list.body as { data: unknown }).data).passkeys.map((passkey) => passkey.name)).toEqual([
      "After proof",
    ]);
    expect(stackLog(stack.logFile)).toContain("Before proof");
    expectErrorCode(
      await post("/auth/passkeys/login", { response: unproven.get(await signInOptions()) }),
      "passkey_rejected",
    );
  });
});

describe("the TOTP code", () => {
  it("is still asked of a password sign-in of an account with both", async () => {
    const enrolled = await enrolledAccount(stack, "both", password);
    await registerPasskey(enrolled.accessToken, new SoftAuthenticator());
    const first = expectSession(await post("/auth/login", { email: enrolled.email, password }), 200);
    expect(first.mfaRequired).toBe(true);
    await awayFromStepEdge();
    // The next step's code: activation used this one.
    const second = await post("/auth/mfa/verify", { code: codeOf(enrolled.secret, 1) }, first.accessToken);
    expect(second.status, second.text).toBe(200);
  });
});
