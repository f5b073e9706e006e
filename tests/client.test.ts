/**
 * The typed client of shared/ against the running stack, in Node (this test),
 * and in Deno: the documented examples (the typed client of the README, and the
 * same calls through supabase-js's functions.invoke of docs/clients.md), run as written.
 */
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  type BrowserNavigation,
  createNotesClient,
  memorySessionStorage,
  type NoteChange,
  NotesApiError,
  type NotesClient,
  type OperationName,
  type operations,
  type Session,
  type WatchChangesOptions,
  type WatchStatus,
} from "../shared/index.ts";
import { codeAt, totpPolicy } from "../supabase/functions/_shared/auth/totp.ts";
import { anonKey, readMailedCode, readResetCode, uniqueEmail } from "./support/api.ts";
import { decodeAccessToken } from "./support/auth.ts";
import { signToken } from "./support/tokens.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";
import { sharedStackLimits } from "../dev/harness/stack.ts";
import { type IdentityProvider, identityProviderForStack, ProviderBrowser } from "../dev/harness/identity-provider.ts";

const url = inject("baseUrl");
const password = "correct horse battery";

async function signedUp(
  label: string,
  base = url,
): Promise<{ client: NotesClient; email: string; id: string }> {
  const client = createNotesClient({ url: base, anonKey });
  const email = uniqueEmail(label);
  const session = await client.auth.register({ name: `Client ${label}`, email, password });
  return { client, email, id: session.payload.id };
}

/** Runs an example file with Deno against this run's stack and answers its output. */
function runExample(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("deno", ["run", "--allow-net", "--allow-env", file], {
      env: { ...process.env, NOTES_URL: url, NOTES_ANON_KEY: anonKey },
    });
    let text = "";
    child.stdout.on("data", (chunk) => (text += chunk));
    child.stderr.on("data", (chunk) => (text += chunk));
    child.on("error", reject);
    child.on(
      "exit",
      (
        code,
      ) => (code === 0 ? resolve(text) : reject(new Error(`${file} exited ${code}:\n${text}`))),
    );
  });
}

function fail(message: string): never {
  throw new Error(message);
}

const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();

/** A signed-up user's session, and an access token of theirs that expired (the session itself lives on). */
async function sessionWithExpiredToken(
  label: string,
  client?: NotesClient,
): Promise<{ session: Session; expired: string }> {
  const session = (client ?? (await signedUp(label)).client).session ?? fail("no session");
  const { claims } = decodeAccessToken(session.accessToken);
  const expired = await signToken({ ...claims, iat: Number(claims.iat) - 7300, exp: Number(claims.iat) - 100 });
  return { session, expired };
}

/** A fetch that records the path of every request it sends, and the requests themselves. */
function countingFetch() {
  const sent: string[] = [];
  const requests: RequestInit[] = [];
  return {
    fetch: (input: RequestInfo | URL, init?: RequestInit) => {
      sent.push(new URL(String(input)).pathname.replace(/^.*\/functions\/v1/, ""));
      requests.push(init ?? {});
      return fetch(input, init);
    },
    paths: () => sent,
    requests: () => requests,
  };
}

/**
 * A fetch whose first refresh reaches the service, which rotates the token,
 * and whose answer is then lost as `loseAnswer` says: a dropped connection
 * (it throws) or a stalled one (it never settles). Records the refresh
 * tokens presented.
 */
function losingFirstRefresh(loseAnswer: () => Promise<never>) {
  const presented: string[] = [];
  const losingFetch: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (!String(input).endsWith("/auth/refresh")) return response;
    presented.push(JSON.parse(String(init?.body)).refreshToken);
    // Read whole: the service has answered, so the rotation is done.
    const text = await response.text();
    if (presented.length === 1) return await loseAnswer();
    return new Response(text, response);
  };
  return { fetch: losingFetch, presented };
}

/** The operations that act for a signed-in user: every notes one, and each auth one that takes the access token. */
type SignedInOperation = {
  [K in OperationName]: (typeof operations)[K] extends { envelope: "notes" } | { bearer: true } ? K : never;
}[OperationName];

/**
 * One call of every method that needs a session: each such operation's (the
 * type keeps the list whole), and the methods built on them.
 */
function callsNeedingASession(client: NotesClient): Record<string, () => Promise<unknown>> {
  const id = crypto.randomUUID();
  // Signing out with no session has nothing to end: it answers without a request (tested on its own).
  const byOperation: Record<Exclude<SignedInOperation, "signOut">, () => Promise<unknown>> = {
    listSessions: () => client.auth.listSessions(),
    revokeSession: () => client.auth.revokeSession(id),
    changePassword: () => client.auth.changePassword({ currentPassword: password, newPassword: "another password" }),
    deleteAccount: () => client.auth.deleteAccount({ password }),
    getUser: () => client.auth.getUser(),
    mergeAnonymous: () => client.auth.mergeAnonymous({ anonymousAccessToken: "Bearer a.b.c" }),
    upgradeAnonymous: () => client.auth.upgradeAnonymous({ name: "A", email: "a@example.com", password }),
    sendUpgradeCode: () => client.auth.sendUpgradeCode("a@example.com"),
    upgradeAnonymousWithCode: () =>
      client.auth.upgradeAnonymousWithCode({ name: "A", email: "a@example.com", code: "12345678" }),
    listSecurityEvents: () => client.auth.securityEvents(),
    listUsers: () => client.admin.listUsers(),
    setUserStatus: () => client.admin.setStatus(id, "SUSPENDED"),
    listAccountEvents: () => client.admin.events(id),
    createNote: () => client.notes.create({ title: "never sent" }),
    getNote: () => client.notes.get(id),
    listNotes: () => client.notes.list(),
    listChanges: () => client.notes.changes(),
    streamChanges: () => client.notes.watchChanges({ onChange: () => {} }),
    saveNote: () => client.notes.save({ id, title: "never sent" }),
    deleteNote: () => client.notes.delete(id),
    createAttachment: () => client.attachments.upload(id, new Blob(["never sent"], { type: "text/plain" })),
    // Completing is the upload's last step: without a session its first step is refused.
    completeAttachment: () => client.attachments.upload(id, new Blob(["never sent"], { type: "text/plain" })),
    listAttachments: () => client.attachments.list(id),
    getAttachment: () => client.attachments.url(id),
    deleteAttachment: () => client.attachments.remove(id),
    mfaEnroll: () => client.mfa.enroll({ password }),
    mfaActivate: () => client.mfa.activate({ factorId: id, code: "123456" }),
    mfaVerify: () => client.mfa.verify({ code: "123456" }),
    mfaRecover: () => client.mfa.recover({ recoveryCode: "aaaaa-bbbbb-ccccc-ddddd" }),
    mfaList: () => client.mfa.list(),
    mfaUnenroll: () => client.mfa.unenroll({ factorId: id, code: "123456" }),
    mfaRecoveryCodes: () => client.mfa.regenerateRecoveryCodes({ code: "123456" }),
    reauthenticate: () => client.auth.reauthenticate({ password }),
    reauthenticateWithProvider: () =>
      client.identities.reauthenticate({ provider: "google", redirectTo: "http://127.0.0.1:5173/" }),
    listIdentities: () => client.identities.list(),
    linkIdentity: () => client.identities.link({ provider: "google", redirectTo: "http://127.0.0.1:5173/" }),
    unlinkIdentity: () => client.identities.unlink(id),
    completeLink: () => client.identities.completeSignIn({ url: "http://127.0.0.1:5173/?link_code=never-sent" }),
    // Its options are asked first, so no ceremony starts without a session.
    passkeysRegisterOptions: () => client.passkeys.register(),
    passkeysRegister: () => client.passkeys.register({ name: "never sent" }),
    passkeysList: () => client.passkeys.list(),
    passkeysRename: () => client.passkeys.rename(id, "never sent"),
    passkeysRemove: () => client.passkeys.remove(id),
  };
  return {
    ...byOperation,
    search: () => client.notes.search("groceries"),
    notePages: () => client.notes.pages().next(),
    syncNotes: () => client.notes.sync().next(),
    refreshSession: () => client.auth.refreshSession(),
    downloadAttachment: () => client.attachments.download(id),
  };
}

/** How each call ended: `status code` of its NotesApiError, or what else it did. */
async function outcomes(calls: Record<string, () => Promise<unknown>>): Promise<Record<string, string>> {
  const ended: Record<string, string> = {};
  for (const [name, call] of Object.entries(calls)) {
    ended[name] = await call().then(
      () => "answered",
      (error: unknown) => error instanceof NotesApiError ? `${error.status} ${error.code}` : String(error),
    );
  }
  return ended;
}

/** The rejection of `promise`, which must be a NotesApiError. */
async function apiError(promise: Promise<unknown>): Promise<NotesApiError> {
  const error = await promise.then(() => undefined, (reason: unknown) => reason);
  expect(error).toBeInstanceOf(NotesApiError);
  return error as NotesApiError;
}

describe("createNotesClient", () => {
  it("registers, keeps the token, and creates, lists, saves and deletes notes", async () => {
    const { client, id } = await signedUp("crud");
    expect(client.accessToken).toMatch(/^Bearer /);
    const note = await client.notes.create({ title: "Groceries" });
    expect(note).toMatchObject({ title: "Groceries", content: "", status: "DRAFT", createdBy: id });

    const saved = await client.notes.save({ id: note.id, content: "Eggs", status: "PUBLISHED" });
    expect(saved).toMatchObject({ id: note.id, title: "Groceries", content: "Eggs", status: "PUBLISHED" });

    const page = await client.notes.list({ limit: 5 });
    expect(page.userId).toBe(id);
    expect(page.notes).toEqual([saved]);
    expect(page.pagination).toEqual({ total: 1, limit: 5, offset: 0, hasMore: false });

    expect(await client.notes.delete(note.id)).toEqual({ id: note.id });
    expect((await client.notes.list()).notes).toEqual([]);
  });

  it("iterates over every page of notes", async () => {
    const { client } = await signedUp("pages");
    for (let n = 1; n <= 23; n++) await client.notes.create({ title: `note ${n}` });
    const pages = [];
    for await (const page of client.notes.pages({ limit: 10 })) pages.push(page);
    expect(pages.map((page) => page.notes.length)).toEqual([10, 10, 3]);
    expect(pages.map((page) => page.pagination.offset)).toEqual([0, 10, 20]);
    const titles = pages.flatMap((page) => page.notes.map((note) => note.title));
    expect(new Set(titles).size).toBe(23);
    expect(titles[0]).toBe("note 23");
  });

  it("still answers the flat methods of version 1, as aliases of the concerns, for apps that have not moved", async () => {
    const { email, id } = await signedUp("aliases");
    const client = createNotesClient({ url, anonKey });
    const session = await client.login({ email, password });
    expect(client.session).toEqual({ ...session, deviceToken: undefined });
    const note = await client.createNote({ title: "Kept by an alias" });
    expect(await client.getNote(note.id)).toEqual(note);
    expect((await client.listNotes()).notes).toEqual([note]);
    const pages = [];
    for await (const page of client.notePages({ limit: 1 })) pages.push(page.notes);
    expect(pages).toEqual([[note]]);
    expect((await client.getUser()).id).toBe(id);
    await client.signOut();
    expect(client.session).toBeUndefined();
  });

  it("logs in, and accepts a kept session whose token comes with or without its Bearer prefix", async () => {
    const { email } = await signedUp("login");
    const client = createNotesClient({ url, anonKey });
    const session = await client.auth.login({ email, password });
    expect(client.accessToken).toBe(session.accessToken);
    // The device token outlives the session, so the client keeps it apart.
    expect(client.session).toEqual({ ...session, deviceToken: undefined });

    const bare = createNotesClient({ url, anonKey });
    bare.setSession({ ...session, accessToken: session.accessToken.slice("Bearer ".length) });
    expect((await bare.notes.list()).userId).toBe(session.payload.id);
    expect((await bare.auth.getUser()).id).toBe(session.payload.id);
    await bare.auth.signOut();
    expect(bare.session).toBeUndefined();
    const signedOut = await apiError(bare.notes.list());
    expect(signedOut).toMatchObject({ status: 401, code: "not_signed_in" });
    // Signing out ended the session on the server, for the other client too: its refresh is refused.
    expect(await apiError(client.notes.list())).toMatchObject({ status: 401, code: "session_revoked" });
    expect(client.session).toBeUndefined();
  });

  it("throws not_signed_in for every call that needs a session when there is none, sending nothing", async () => {
    const { email } = await signedUp("signed-out");
    const traffic = countingFetch();
    const never = createNotesClient({ url, anonKey, fetch: traffic.fetch });
    const client = createNotesClient({ url, anonKey, fetch: traffic.fetch });
    await client.auth.login({ email, password });
    await client.auth.signOut();
    // Signing out again has nothing to end, and answers.
    await client.auth.signOut();
    for (const [which, each] of [["never signed in", never], ["signed out", client]] as const) {
      const ended = await outcomes(callsNeedingASession(each));
      const expected = Object.fromEntries(Object.keys(ended).map((name) => [name, "401 not_signed_in"]));
      expect(ended, which).toEqual(expected);
    }
    expect(traffic.paths()).toEqual(["/auth/login", "/auth/logout"]);
  });

  it("keeps when the session expires, as the API answered it", async () => {
    const before = Date.now();
    const { client } = await signedUp("expiry");
    const expiresAt = client.expiresAt?.getTime() ?? Number.NaN;
    expect(expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 2 * 3600 * 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 2 * 3600 * 1000);
    await client.auth.signOut();
    expect(client.expiresAt).toBeUndefined();
  });

  it("refreshes once on a 401 token_expired and retries the call", async () => {
    const { session, expired } = await sessionWithExpiredToken("expired");
    const traffic = countingFetch();
    const client = createNotesClient({ url, anonKey, fetch: traffic.fetch });
    client.setSession({ ...session, accessToken: expired, expiresAt: inAnHour() });
    const note = await client.notes.create({ title: "just in time" });
    expect(note.createdBy).toBe(session.payload.id);
    expect(traffic.paths()).toEqual(["/notes-create", "/auth/refresh", "/notes-create"]);
    expect(client.session?.refreshToken).not.toBe(session.refreshToken);
    expect(client.accessToken).not.toContain(expired);
  });

  it("refreshes ahead of expiry, once for concurrent calls", async () => {
    const { client: owner } = await signedUp("ahead");
    const session = owner.session ?? fail("no session");
    const traffic = countingFetch();
    const client = createNotesClient({ url, anonKey, fetch: traffic.fetch });
    client.setSession({ ...session, expiresAt: new Date(Date.now() + 10_000).toISOString() });
    const changes: unknown[] = [];
    client.onSessionChange((changed) => changes.push(changed));
    await Promise.all(Array.from({ length: 5 }, () => client.notes.list()));
    expect(traffic.paths().filter((path) => path === "/auth/refresh")).toHaveLength(1);
    expect(traffic.paths().filter((path) => path === "/notes-fetch")).toHaveLength(5);
    expect(changes).toEqual([client.session]);
  });

  it("keeps the session when a refresh fails for want of an answer or with a 5xx, and drops it on a 401", async () => {
    const { session, expired } = await sessionWithExpiredToken("flaky");
    const seen: NotesApiError[] = [];
    let refreshAnswer: "offline" | "503" | "real" = "offline";
    const client = createNotesClient({
      url,
      anonKey,
      onUnauthorized: (error) => seen.push(error),
      fetch: (input, init) => {
        if (String(input).endsWith("/auth/refresh") && refreshAnswer === "offline") {
          return Promise.reject(new TypeError("network down"));
        }
        if (String(input).endsWith("/auth/refresh") && refreshAnswer === "503") {
          return Promise.resolve(Response.json({ statusCode: 503, message: "down" }, { status: 503 }));
        }
        return fetch(input, init);
      },
    });
    const kept = { ...session, accessToken: expired, expiresAt: inAnHour() };
    client.setSession(kept);
    expect(await apiError(client.notes.list())).toMatchObject({ status: 0 });
    expect(client.session).toEqual(kept);
    refreshAnswer = "503";
    expect(await apiError(client.notes.list())).toMatchObject({ status: 503 });
    expect(client.session).toEqual(kept);
    expect(seen).toEqual([]);

    // Ended on the server (a sign-out elsewhere): the refresh is answered 401 and the session goes.
    refreshAnswer = "real";
    const elsewhere = createNotesClient({ url, anonKey });
    elsewhere.setSession(session);
    await elsewhere.auth.signOut({ scope: "global" });
    const ended = await apiError(client.notes.list());
    expect(ended).toMatchObject({ status: 401, code: "session_revoked" });
    expect(client.session).toBeUndefined();
    expect(seen).toEqual([ended]);
    // A wrong password at login is not a lost session: no hook.
    await apiError(client.auth.login({ email: uniqueEmail("nobody"), password }));
    expect(seen).toHaveLength(1);
  });

  it.each([
    ["is answered 401 token_revoked", 3_600_000, ["/notes-fetch", "/auth/refresh"]],
    ["is about to expire", 10_000, ["/auth/refresh"]],
  ])(
    "throws the error onUnauthorized is given when a sign-out elsewhere ended the session and the token %s",
    async (_, expiresInMs, sent) => {
      const { client: elsewhere } = await signedUp("ended-elsewhere");
      const session = elsewhere.session ?? fail("no session");
      await elsewhere.auth.signOut({ scope: "global" });
      const seen: NotesApiError[] = [];
      const traffic = countingFetch();
      const client = createNotesClient({
        url,
        anonKey,
        fetch: traffic.fetch,
        onUnauthorized: (error) => seen.push(error),
      });
      client.setSession({ ...session, expiresAt: new Date(Date.now() + expiresInMs).toISOString() });
      const error = await apiError(client.notes.list());
      expect(error).toMatchObject({ status: 401, code: "session_revoked" });
      expect(seen).toHaveLength(1);
      expect(seen[0]).toBe(error);
      expect(traffic.paths()).toEqual(sent);
      expect(client.session).toBeUndefined();
      // Nothing more is sent: the next call has no session.
      expect(await apiError(client.auth.getUser())).toMatchObject({ status: 401, code: "not_signed_in" });
      expect(traffic.paths()).toEqual(sent);
    },
  );

  it("throws the refused refresh's error from a call whose 401 came after that refresh ended the session", async () => {
    const { client: elsewhere } = await signedUp("ended-meanwhile");
    const session = elsewhere.session ?? fail("no session");
    await elsewhere.auth.signOut({ scope: "global" });
    const seen: NotesApiError[] = [];
    let answered: () => void = () => {};
    const userAnswered = new Promise<void>((resolve) => (answered = resolve));
    let deliver: () => void = () => {};
    const delivered = new Promise<void>((resolve) => (deliver = resolve));
    const client = createNotesClient({
      url,
      anonKey,
      onUnauthorized: (error) => seen.push(error),
      // The answer to getUser arrives late: after listNotes has refreshed, been refused and dropped the session.
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (String(input).endsWith("/auth/user")) {
          answered();
          await delivered;
        }
        return response;
      },
    });
    client.setSession(session);
    const user = apiError(client.auth.getUser());
    await userAnswered;
    const list = await apiError(client.notes.list());
    expect(client.session).toBeUndefined();
    deliver();
    const late = await user;
    expect(seen).toHaveLength(1);
    expect(list).toBe(seen[0]);
    expect(late).toBe(seen[0]);
    expect(late).toMatchObject({ status: 401, code: "session_revoked" });
  });

  // A stalled answer is given up on at half the client's timeoutMs when that is under 10 s: 2 s here, not 5.
  it.each([
    ["is cut off", () => Promise.reject(new TypeError("network connection lost")), undefined],
    ["never comes", () => new Promise<never>(() => {}), 4_000],
  ])("keeps the user signed in when the answer to a refresh %s", async (_, loseAnswer, timeoutMs) => {
    const { session, expired } = await sessionWithExpiredToken("lost-refresh");
    const seen: NotesApiError[] = [];
    const losing = losingFirstRefresh(loseAnswer);
    const client = createNotesClient({
      url,
      anonKey,
      timeoutMs,
      onUnauthorized: (error) => seen.push(error),
      fetch: losing.fetch,
    });
    client.setSession({ ...session, accessToken: expired, expiresAt: inAnHour() });

    expect((await client.notes.list()).notes).toEqual([]);
    expect(losing.presented).toEqual([session.refreshToken, session.refreshToken]);
    const renewed = client.session ?? fail("signed out");
    expect(renewed.refreshToken).not.toBe(session.refreshToken);
    // The next request with the new token works, and the session lives on: it is listed, and refreshes again.
    await client.notes.create({ title: "still signed in" });
    expect((await client.auth.listSessions()).filter((listed) => listed.current)).toHaveLength(1);
    expect((await client.auth.refreshSession()).refreshToken).not.toBe(renewed.refreshToken);
    expect(seen).toEqual([]);
  });

  it("retries with the session a login started while a call with the old token was on its way", async () => {
    const { client: owner, email } = await signedUp("relogin");
    const { expired } = await sessionWithExpiredToken("unused", owner);
    const seen: NotesApiError[] = [];
    let loggedInMeanwhile = false;
    const client = createNotesClient({
      url,
      anonKey,
      onUnauthorized: (error) => seen.push(error),
      // The app's own fetch: the 401's answer arrives only after the user has logged in again.
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (response.status === 401 && !loggedInMeanwhile) {
          loggedInMeanwhile = true;
          await client.auth.login({ email, password });
        }
        return response;
      },
    });
    client.setSession({ ...(owner.session ?? fail("no session")), accessToken: expired, expiresAt: inAnHour() });
    expect((await client.notes.list()).notes).toEqual([]);
    expect(seen).toEqual([]);
    expect(client.accessToken).not.toContain(expired);
  });

  it("lists the account's sessions, ends one, and signs out others or everywhere", async () => {
    const { client: laptop, email } = await signedUp("devices");
    const phone = createNotesClient({ url, anonKey });
    await phone.auth.login({ email, password });
    const sessions = await laptop.auth.listSessions();
    expect(sessions).toHaveLength(2);
    const phoneSession = sessions.find((each) => !each.current) ?? fail("no other session");
    expect(await laptop.auth.revokeSession(phoneSession.id)).toEqual({ id: phoneSession.id });
    expect(await apiError(phone.notes.list())).toMatchObject({ status: 401 });
    expect(phone.session).toBeUndefined();

    await phone.auth.login({ email, password });
    await laptop.auth.signOut({ scope: "others" });
    expect(laptop.session).toBeDefined();
    expect((await laptop.auth.listSessions()).map((each) => each.current)).toEqual([true]);
    await apiError(phone.notes.list());
    expect(phone.session).toBeUndefined();
  });

  it("verifies the address, changes the password and deletes the account, keeping the session in step", async () => {
    const { client, email } = await signedUp("self-service");
    const verified = await client.auth.verifyEmail({
      email,
      code: await readMailedCode(email, { kind: "verification" }),
    });
    expect(verified.payload.isVerified).toBe(true);
    // The client keeps the session and, apart from it, the sign-in's device token.
    expect(client.session).toEqual({ ...verified, deviceToken: undefined });
    expect(await client.auth.resendVerification({ email })).toMatch(/^If this address has an account/);

    const wrong = await apiError(
      client.auth.changePassword({ currentPassword: "not it", newPassword: "a new password" }),
    );
    // A wrong password is not a lost session: no refresh, and the session stays.
    expect(wrong).toMatchObject({ status: 401, code: "invalid_credentials" });
    expect(client.session).toEqual({ ...verified, deviceToken: undefined });
    const changed = await client.auth.changePassword({ currentPassword: password, newPassword: "a new password" });
    expect(client.session).toEqual({ ...changed, deviceToken: undefined });
    await client.notes.create({ title: "after the change" });

    await client.auth.deleteAccount({ password: "a new password" });
    expect(client.session).toBeUndefined();
    await apiError(client.auth.login({ email, password: "a new password" }));
  });

  it("enrolls a second factor, and makes the second step of later sign-ins with a code or a recovery code", async () => {
    const { client, email } = await signedUp("second-factor");
    // Enrolling needs a verified address: the code mailed at registration.
    await client.auth.verifyEmail({ email, code: await readMailedCode(email, { kind: "verification" }) });
    const enrollment = await client.mfa.enroll({ password });
    expect(enrollment.otpauthUrl).toContain(`secret=${enrollment.secret}`);
    expect(await client.mfa.list()).toMatchObject({ factors: [{ id: enrollment.factorId, status: "pending" }] });
    const period = totpPolicy.periodSeconds * 1000;
    // A code made now must still be now's when it arrives: not in the last seconds of its step.
    const left = period - (Date.now() % period);
    if (left < 5_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
    const now = Date.now();
    const near = [-1, 0, 1].map((steps) => codeAt(enrollment.secret, now + steps * period));
    const wrong = ["000000", "111111", "222222", "333333"].find((code) => !near.includes(code));
    const refused = await apiError(client.mfa.activate({ factorId: enrollment.factorId, code: wrong ?? "" }));
    expect(refused).toMatchObject({ status: 400, code: "invalid_code" });
    expect(client.session?.mfaRequired).toBe(false);

    const activation = await client.mfa.activate({
      factorId: enrollment.factorId,
      code: codeAt(enrollment.secret, now),
    });
    expect(activation.recoveryCodes).toHaveLength(10);
    expect(activation.mfaRequired).toBe(false);
    // The session activation answered replaces the kept one; its recovery codes are not kept with it.
    const { recoveryCodes, ...activated } = activation;
    expect(client.session).toEqual({ ...activated, deviceToken: undefined });
    await client.notes.create({ title: "behind a second factor" });

    const signedIn = await client.auth.login({ email, password });
    expect(signedIn.mfaRequired).toBe(true);
    expect(client.session?.mfaRequired).toBe(true);
    expect(await apiError(client.notes.list())).toMatchObject({ status: 403, code: "mfa_required" });
    // A 403 is not a lost session: the client keeps it for the second step.
    expect(client.session?.accessToken).toBe(signedIn.accessToken);
    expect((await client.auth.getUser()).email).toBe(email);
    // The next time step's code: the one activation used is accepted only once.
    const verified = await client.mfa.verify({ code: codeAt(enrollment.secret, now + period) });
    expect(verified.mfaRequired).toBe(false);
    expect(client.session).toEqual({ ...verified, deviceToken: undefined });
    expect((await client.notes.list()).notes.map((note) => note.title)).toEqual(["behind a second factor"]);

    const phone = createNotesClient({ url, anonKey });
    expect((await phone.auth.login({ email, password })).mfaRequired).toBe(true);
    const recovered = await phone.mfa.recover({ recoveryCode: recoveryCodes[0].toUpperCase() });
    expect(recovered.recoveryCodesLeft).toBe(9);
    const { recoveryCodesLeft: _left, ...recoveredSession } = recovered;
    expect(phone.session).toEqual({ ...recoveredSession, deviceToken: undefined });
    expect((await phone.notes.list()).pagination.total).toBe(1);
    expect(await apiError(phone.mfa.recover({ recoveryCode: recoveryCodes[0] }))).toMatchObject({
      status: 400,
      code: "invalid_code",
    });

    expect(await client.mfa.list()).toMatchObject({
      factors: [{ id: enrollment.factorId, status: "active" }],
      recoveryCodesLeft: 9,
    });
    const fresh = await client.mfa.regenerateRecoveryCodes({ recoveryCode: recoveryCodes[1] });
    expect(fresh).toHaveLength(10);
    expect((await client.mfa.list()).recoveryCodesLeft).toBe(10);
    await client.mfa.unenroll({ factorId: enrollment.factorId, recoveryCode: fresh[0] });
    expect(await client.mfa.list()).toEqual({ factors: [], recoveryCodesLeft: 0 });
    expect((await client.auth.login({ email, password })).mfaRequired).toBe(false);
    await client.notes.list();
  });

  it("keeps the device token across sign-outs and sends it with every later login", async () => {
    const { email } = await signedUp("device");
    const bodies: { deviceToken?: string }[] = [];
    const client = createNotesClient({
      url,
      anonKey,
      fetch: (input, init) => {
        if (String(input).endsWith("/auth/login")) bodies.push(JSON.parse(String(init?.body)));
        return fetch(input, init);
      },
    });
    const first = await client.auth.login({ email, password });
    expect(first.deviceToken).toMatch(/\S+/);
    await client.auth.signOut();
    await client.auth.login({ email, password });
    expect(bodies.map((body) => body.deviceToken)).toEqual([undefined, first.deviceToken]);
  });

  it("shares one refresh between clients of one storage, as tabs of one origin do", async () => {
    const { client: owner } = await signedUp("tabs");
    const storage = { ...memorySessionStorage(), sharedBy: `notes-test:${crypto.randomUUID()}` };
    const traffic = countingFetch();
    const tabs = [1, 2, 3].map(() => createNotesClient({ url, anonKey, storage, fetch: traffic.fetch }));
    const session = owner.session ?? fail("no session");
    tabs[0].setSession({ ...session, expiresAt: new Date(Date.now() - 1_000).toISOString() });
    await Promise.all(tabs.map((tab) => tab.notes.list()));
    expect(traffic.paths().filter((path) => path === "/auth/refresh")).toHaveLength(1);
    expect(new Set(tabs.map((tab) => tab.session?.refreshToken)).size).toBe(1);
  });

  it("keeps every tab signed in when the answer to the tabs' one refresh is lost", async () => {
    const { session, expired } = await sessionWithExpiredToken("lost-tabs");
    const storage = { ...memorySessionStorage(), sharedBy: `notes-test:${crypto.randomUUID()}` };
    const losing = losingFirstRefresh(() => Promise.reject(new TypeError("network connection lost")));
    const tabs = [1, 2].map(() => createNotesClient({ url, anonKey, storage, fetch: losing.fetch }));
    tabs[0].setSession({ ...session, accessToken: expired, expiresAt: inAnHour() });
    await Promise.all(tabs.map((tab) => tab.notes.list()));
    // The tab that won the refresh sent it again; the other took its result.
    expect(losing.presented).toEqual([session.refreshToken, session.refreshToken]);
    expect(new Set(tabs.map((tab) => tab.session?.refreshToken)).size).toBe(1);
    expect(tabs[1].session?.refreshToken).not.toBe(session.refreshToken);
  });

  it("reads one note, and throws a 409 note_conflict with the stored note for a stale save or delete", async () => {
    const { client } = await signedUp("versions");
    const note = await client.notes.create({ title: "Two tabs" });
    const mine = await client.notes.save({ id: note.id, content: "first tab", expectedUpdatedAt: note.updatedAt });
    expect(await client.notes.get(note.id)).toEqual(mine);
    const stale = await apiError(
      client.notes.save({ id: note.id, content: "second tab", expectedUpdatedAt: note.updatedAt }),
    );
    expect(stale).toMatchObject({ status: 409, code: "note_conflict" });
    expect(stale.note).toEqual(mine);
    const staleDelete = await apiError(client.notes.delete(note.id, { expectedUpdatedAt: note.updatedAt }));
    expect(staleDelete.note).toEqual(mine);
    expect(await client.notes.delete(note.id, { expectedUpdatedAt: mine.updatedAt })).toEqual({ id: note.id });
  });

  it("filters and searches, and keeps a copy in step with syncNotes, tombstones included", async () => {
    const { client } = await signedUp("sync");
    const groceries = await client.notes.create({
      title: "Groceries",
      content: "Crème fraîche",
      status: "PUBLISHED",
    });
    const draft = await client.notes.create({ title: "Draft" });
    expect((await client.notes.search("creme")).notes).toEqual([groceries]);
    expect((await client.notes.list({ status: "DRAFT" })).notes).toEqual([
      draft,
    ]);
    expect(
      (await client.notes.list({ status: "PUBLISHED", q: "draft" })).pagination
        .total,
    ).toBe(0);
    expect(await apiError(client.notes.list({ q: "x".repeat(201) })))
      .toMatchObject({ status: 400 });

    const copy = new Map<string, string>();
    let cursor: string | undefined;
    const sync = async () => {
      for await (const page of client.notes.sync(cursor, { limit: 1 })) {
        for (const change of page.changes) {
          if ("deleted" in change) copy.delete(change.id);
          else copy.set(change.id, change.title);
        }
        cursor = page.cursor;
      }
    };
    await sync();
    expect(copy).toEqual(
      new Map([[groceries.id, "Groceries"], [draft.id, "Draft"]]),
    );
    await client.notes.delete(draft.id);
    await client.notes.save({ id: groceries.id, title: "Shopping" });
    const added = await client.notes.create({ title: "Added" });
    await sync();
    expect(copy).toEqual(
      new Map([[groceries.id, "Shopping"], [added.id, "Added"]]),
    );
    expect(await apiError(client.notes.changes({ since: "not-a-cursor" })))
      .toMatchObject({ status: 400 });
  });

  it("retries a create whose answer was lost with the same Idempotency-Key, making one note", async () => {
    const { client: signedIn } = await signedUp("retry");
    const sentKeys: (string | null)[] = [];
    let answersLost = 1;
    // The request reaches the service and the note is made; only its answer goes missing, as on a dropped connection.
    const losingFetch: typeof fetch = async (input, init) => {
      sentKeys.push(new Headers(init?.headers).get("Idempotency-Key"));
      const response = await fetch(input, init);
      if (answersLost-- > 0) throw new TypeError("network connection lost");
      return response;
    };
    const client = createNotesClient({ url, anonKey, fetch: losingFetch });
    client.setSession(signedIn.session);
    const note = await client.notes.create({ title: "Made once" });
    expect(sentKeys).toHaveLength(2);
    expect(sentKeys[0]).toMatch(/^[!-~]{1,255}$/);
    expect(sentKeys[1]).toBe(sentKeys[0]);
    expect((await signedIn.listNotes()).notes).toEqual([note]);
    await signedIn.createNote({ title: "Made once" });
    expect(sentKeys).toHaveLength(2);
    expect(
      (await signedIn.listNotes()).notes.filter((listed) => listed.title === "Made once"),
    ).toHaveLength(2);
  });

  it("throws NotesApiError with status 0 when the service cannot be reached", async () => {
    const closed = new URL(url);
    closed.port = "9";
    const client = createNotesClient({ url: closed.href, anonKey });
    const error = await apiError(client.auth.login({ email: uniqueEmail(), password }));
    expect(error.status).toBe(0);
    expect(error.code).toBe("network_error");
    expect(error.message).toBe(`The notes service could not be reached at ${closed.origin}`);
    expect(error.cause).toBeInstanceOf(TypeError);
  });

  it("sets a new password with a reset code and keeps the new token", async () => {
    const { email } = await signedUp("reset");
    const client = createNotesClient({ url, anonKey });
    const message = await client.auth.requestPasswordReset({ email });
    expect(message).toBe("If an account exists for this email, a reset code has been sent to it");
    const session = await client.auth.createPassword({
      email,
      password: "a brand new secret",
      code: await readResetCode(email),
    });
    expect(session.payload.isVerified).toBe(true);
    expect(client.accessToken).toBe(session.accessToken);
    await client.notes.create({ content: "after the reset" });
    await client.auth.login({ email, password: "a brand new secret" });
  });

  it("signs in with a code by email and keeps the session and the device token", async () => {
    const { email } = await signedUp("code");
    const client = createNotesClient({ url, anonKey });
    expect(await client.auth.sendSignInCode(email)).toBe(
      "If an account exists for this email, a sign-in code has been sent to it",
    );
    const code = await readMailedCode(email, { kind: "sign-in" });
    const wrong = await apiError(client.auth.signInWithCode(email, code === "00000000" ? "00000001" : "00000000"));
    expect(wrong.status).toBe(400);
    expect(wrong.code).toBe("invalid_code");
    const session = await client.auth.signInWithCode(email, code);
    expect(session.payload.isVerified).toBe(true);
    expect(session.deviceToken).toBeTruthy();
    expect(client.accessToken).toBe(session.accessToken);
    await client.notes.create({ content: "after a code" });
  });

  it("throws NotesApiError with the status, the API's words and the envelope", async () => {
    const client = createNotesClient({ url, anonKey });
    const wrong = await apiError(client.auth.login({ email: uniqueEmail("nobody"), password }));
    expect(wrong.status).toBe(401);
    expect(wrong.message).toBe("Invalid email or password");
    expect(wrong.code).toBe("invalid_credentials");
    expect(wrong.envelope).toEqual({
      statusCode: 401,
      message: "Invalid email or password",
      code: "invalid_credentials",
    });
    expect(wrong.requestId).toMatch(/\S{8,}/);

    const { client: owner } = await signedUp("errors");
    const empty = await apiError(owner.notes.create({}));
    expect(empty.status).toBe(400);
    expect(empty.envelope).toEqual({
      success: false,
      error: "At least one of title or content is required",
      code: "invalid_request",
      fields: [{ message: "At least one of title or content is required" }],
    });
    const invalid = await apiError(owner.notes.create({ title: "x".repeat(1001), status: "DONE" as "DRAFT" }));
    expect(invalid.fields.map((problem) => problem.field)).toEqual(["title", "status"]);

    const keyless = createNotesClient({ url, anonKey: "not-the-key" });
    expect(await apiError(keyless.auth.requestPasswordReset({ email: uniqueEmail() })))
      .toMatchObject({ status: 401, code: "invalid_api_key" });
  });

  it("keeps each user to their own notes", async () => {
    const first = await signedUp("first");
    const second = await signedUp("second");
    const secret = await first.client.notes.create({ title: "first's secret" });
    expect((await second.client.notes.list()).notes).toEqual([]);
    expect((await apiError(second.client.notes.save({ id: secret.id, title: "taken" }))).status).toBe(404);
    expect((await apiError(second.client.notes.delete(secret.id))).status).toBe(404);
    expect((await first.client.notes.list()).notes).toEqual([secret]);
  });

  it("runs the README's quickstart in Deno as written", async () => {
    const output = await runExample("examples/quickstart.ts");
    expect(output).toMatch(/^registered ada-\w+@example\.com \(/m);
    expect(output).toMatch(/^PUBLISHED Groceries$/m);
    expect(output).toMatch(/^404 Note not found$/m);
  });
});

/** A request a {@link ScriptedServer} received: its path, and whether the client has since hung up on it. */
interface Received {
  path: string;
  closed: boolean;
}

interface ScriptedServer {
  /** The functions' base URL on this server. */
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/**
 * A local HTTP server that hands each request to `answer`, which may never
 * respond: the connection is accepted and then left silent, as a stalled
 * service or network does.
 */
async function scriptedServer(
  answer: (request: IncomingMessage, response: ServerResponse, index: number) => void,
): Promise<ScriptedServer> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const entry = { path: new URL(request.url ?? "/", "http://server").pathname, closed: false };
    received.push(entry);
    response.on("close", () => (entry.closed = true));
    answer(request, response, received.length - 1);
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/functions/v1`,
    received,
    close: () =>
      new Promise((closed) => {
        server.close(() => closed());
        server.closeAllConnections();
      }),
  };
}

/** Never answers. */
const silence = () => {};

/** Answers a notes error envelope with `status` and `code` after `delayMs`. */
function notesErrorAfter(delayMs: number, status: number, code: string) {
  return (_request: IncomingMessage, response: ServerResponse) => {
    setTimeout(() => {
      response.writeHead(status, { "Content-Type": "application/json", "Retry-After": "1" });
      response.end(JSON.stringify({ error: `failed with ${code}`, success: false, code }));
    }, delayMs);
  };
}

/** How long `call` takes to reject, and its error. */
async function timedFailure(call: Promise<unknown>): Promise<{ error: NotesApiError; elapsedMs: number }> {
  const started = performance.now();
  const error = await apiError(call);
  return { error, elapsedMs: performance.now() - started };
}

/**
 * Waits a while, then checks that nothing more reached the server, and that
 * the client hangs up on every request: at the call's deadline, or a shared
 * refresh at its own (the client's `timeoutMs`).
 */
async function expectQuietAfterDeadline(server: ScriptedServer, requests: number) {
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(server.received).toHaveLength(requests);
  await expect.poll(() => server.received.every((request) => request.closed), { timeout: 5_000 }).toBe(true);
}

/** A session as the client keeps it; the scripted server never checks it. */
const someSession: Session = {
  payload: {
    id: crypto.randomUUID(),
    name: "Timed",
    phoneNumber: null,
    email: "timed@example.com",
    role: "STANDARD_USER",
    status: "ACTIVE",
    isVerified: true,
    isAnonymous: false,
    createdAt: new Date().toISOString(),
    updatedAt: new Date().toISOString(),
  },
  accessToken: "Bearer header.claims.signature",
  expiresAt: inAnHour(),
  refreshToken: "session.secret",
  mfaRequired: false,
};

/**
 * A watch of `client`'s changes that records what it is given: each change
 * with its cursor, each ready cursor and status; `stop` aborts it, `done` is
 * its promise.
 */
function watching(client: NotesClient, options: Partial<WatchChangesOptions> = {}) {
  const changes: { change: NoteChange; cursor: string }[] = [];
  const readies: string[] = [];
  const statuses: WatchStatus[] = [];
  const stopper = new AbortController();
  const done = client.notes.watchChanges({
    onChange: (change, cursor) => void changes.push({ change, cursor }),
    onReady: (cursor) => void readies.push(cursor),
    onStatus: (status) => void statuses.push(status),
    signal: stopper.signal,
    ...options,
  });
  // Its end is awaited by each test that expects one; this keeps a rejection from going unhandled meanwhile.
  done.catch(() => {});
  return { changes, readies, statuses, done, stop: () => stopper.abort() };
}

// A change reaches a stream at the latest at the stack's next poll of the change counters (STREAM_POLL_MS, 2 s),
// when no notice connection tells it sooner.
const live = { timeout: 10_000 };

describe("watchChanges", () => {
  it("gives each change another client makes, live, in order, with a cursor that resumes after it", async () => {
    const { client, email } = await signedUp("watch-live");
    const other = createNotesClient({ url, anonKey });
    await other.auth.login({ email, password });
    const watch = watching(client);
    await expect.poll(() => watch.readies.length).toBe(1);
    expect(watch.statuses).toEqual(["connecting", "live"]);

    const note = await other.notes.create({ title: "from the phone" });
    await expect.poll(() => watch.changes.length, live).toBe(1);
    const saved = await other.notes.save({ id: note.id, content: "edited" });
    await expect.poll(() => watch.changes.length, live).toBe(2);
    await other.notes.delete(note.id);
    await expect.poll(() => watch.changes.length, live).toBe(3);
    expect(watch.changes.map(({ change }) => change)).toEqual([note, saved, { id: note.id, deleted: true }]);
    // The last cursor is the feed's end: nothing follows it.
    const after = await client.notes.changes({ since: watch.changes[2].cursor });
    expect(after.changes).toEqual([]);

    watch.stop();
    await expect(watch.done).resolves.toBeUndefined();
  });

  it("awaits onChange before the next change, so a slow consumer applies them in order", async () => {
    const { client } = await signedUp("watch-slow");
    const applied: string[] = [];
    let applying = 0;
    let mostAtOnce = 0;
    const watch = watching(client, {
      onChange: async (change) => {
        mostAtOnce = Math.max(mostAtOnce, ++applying);
        await new Promise((resolve) => setTimeout(resolve, 150));
        applied.push(change.id);
        applying--;
      },
    });
    await expect.poll(() => watch.readies.length).toBe(1);
    const created = [];
    for (const title of ["one", "two", "three"]) created.push((await client.notes.create({ title })).id);
    await expect.poll(() => applied.length, live).toBe(3);
    expect(applied).toEqual(created);
    expect(mostAtOnce).toBe(1);
    watch.stop();
    await watch.done;
  });

  it("stops when its signal aborts: the connection is closed and nothing more is sent", async () => {
    const { client: owner } = await signedUp("watch-abort");
    const traffic = countingFetch();
    const client = createNotesClient({ url, anonKey, fetch: traffic.fetch });
    client.setSession(owner.session);
    const watch = watching(client);
    await expect.poll(() => watch.readies.length).toBe(1);
    watch.stop();
    await expect(watch.done).resolves.toBeUndefined();
    expect(traffic.requests()[0].signal?.aborted).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(traffic.paths()).toEqual(["/notes-stream"]);
    expect(watch.statuses).toEqual(["connecting", "live"]);
  });

  it("refreshes an expired access token, as any call does, and goes on", async () => {
    const { session, expired } = await sessionWithExpiredToken("watch-expired");
    const traffic = countingFetch();
    const client = createNotesClient({ url, anonKey, fetch: traffic.fetch });
    client.setSession({ ...session, accessToken: expired, expiresAt: inAnHour() });
    const watch = watching(client);
    await expect.poll(() => watch.readies.length).toBe(1);
    expect(traffic.paths()).toEqual(["/notes-stream", "/auth/refresh", "/notes-stream"]);
    expect(client.accessToken).not.toContain(expired);
    const note = await client.notes.create({ title: "after the refresh" });
    await expect.poll(() => watch.changes.map(({ change }) => change), live).toEqual([note]);
    watch.stop();
    await watch.done;
  });

  it("waits out a 429 (the account's streams are all open) for its Retry-After, then connects again", async () => {
    const at: number[] = [];
    const server = await scriptedServer((request, response, index) => {
      at.push(performance.now());
      if (index === 0) return notesErrorAfter(0, 429, "rate_limited")(request, response);
      response.writeHead(200, { "Content-Type": "text/event-stream" });
      response.write(`event: ready\nid: cursor-${index}\ndata: {"cursor":"cursor-${index}"}\n\n`);
    });
    try {
      const client = createNotesClient({ url: server.url, anonKey });
      client.setSession(someSession);
      const watch = watching(client);
      await expect.poll(() => watch.readies.length, live).toBe(1);
      // Retry-After: 1 second.
      expect(at[1] - at[0]).toBeGreaterThanOrEqual(1_000);
      expect(watch.statuses).toEqual(["connecting", "reconnecting", "live"]);
      watch.stop();
      await watch.done;
    } finally {
      await server.close();
    }
  });

  it("waits before connecting again: Retry-After, then a doubling wait after failures, the service's retry after an end", async () => {
    const at: number[] = [];
    const lastEventIds: (string | string[] | undefined)[] = [];
    const server = await scriptedServer((request, response, index) => {
      at.push(performance.now());
      lastEventIds.push(request.headers["last-event-id"]);
      if (index === 0) return notesErrorAfter(0, 503, "service_unavailable")(request, response);
      // No answer at all: the network failed.
      if (index <= 3) return void request.socket.destroy();
      response.writeHead(200, { "Content-Type": "text/event-stream" });
      response.write(`event: ready\nid: cursor-${index}\ndata: {"cursor":"cursor-${index}"}\n\n`);
      if (index === 4) response.end("retry: 300\n\n");
    });
    try {
      const client = createNotesClient({ url: server.url, anonKey });
      client.setSession(someSession);
      const watch = watching(client);
      await expect.poll(() => watch.readies.length, live).toBe(2);
      const waits = at.slice(1).map((time, index) => time - at[index]);
      // Retry-After: 1 second.
      expect(waits[0]).toBeGreaterThanOrEqual(1_000);
      // 0.5 s, 1 s, 2 s, each between half and all of it.
      for (const [index, ceiling] of [[1, 500], [2, 1_000], [3, 2_000]]) {
        expect(waits[index]).toBeGreaterThanOrEqual(ceiling / 2 - 10);
        expect(waits[index]).toBeLessThan(ceiling + 250);
      }
      // The service's retry after the end it planned, not a wait for a failure.
      expect(waits[4]).toBeGreaterThanOrEqual(290);
      expect(waits[4]).toBeLessThan(800);
      expect(lastEventIds).toEqual([undefined, undefined, undefined, undefined, undefined, "cursor-4"]);
      expect(watch.statuses).toEqual([
        "connecting",
        ...Array(4).fill("reconnecting"),
        "live",
        "reconnecting",
        "live",
      ]);
      watch.stop();
      await watch.done;
    } finally {
      await server.close();
    }
  });

  it("throws the 400 of a cursor that is not one, without reconnecting", async () => {
    const { client } = await signedUp("watch-refused");
    const watch = watching(client, { since: "not-a-cursor" });
    expect(await apiError(watch.done)).toMatchObject({ status: 400, code: "invalid_cursor" });
    expect(watch.statuses).toEqual(["connecting"]);
  });
});

describe("watchChanges across the ends of streams", () => {
  // Streams that end every 2 seconds, so a test sees several reconnections.
  let stack: ScratchStack;
  beforeAll(async () => {
    stack = await startScratchStack("watch", {
      env: { ...sharedStackLimits, BCRYPT_COST: "4", STREAM_MAX_SECONDS: "2" },
    });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("resumes after each end with the last event's id: every change arrives once, none lost", async () => {
    const { client: owner, email } = await signedUp("watch-resume", stack.baseUrl);
    const traffic = countingFetch();
    const client = createNotesClient({ url: stack.baseUrl, anonKey, fetch: traffic.fetch });
    client.setSession(owner.session);
    const watch = watching(client);
    await expect.poll(() => watch.readies.length).toBe(1);
    const writer = createNotesClient({ url: stack.baseUrl, anonKey });
    await writer.auth.login({ email, password });
    // Writes go on across at least two ends of the stream, and while the watch waits to reconnect.
    const made: string[] = [];
    const until = Date.now() + 5_000;
    while (Date.now() < until) {
      made.push((await writer.notes.create({ title: `note ${made.length}` })).id);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await expect.poll(() => watch.changes.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(made.length);
    expect(watch.changes.map(({ change }) => change.id)).toEqual(made);
    const streams = traffic.requests().filter((_, index) => traffic.paths()[index] === "/notes-stream");
    expect(streams.length).toBeGreaterThanOrEqual(3);
    // Every reconnection names the last event the watch was given.
    for (const request of streams.slice(1)) {
      expect(new Headers(request.headers).get("last-event-id")).toBeTruthy();
    }
    expect(watch.statuses.filter((status) => status === "reconnecting").length).toBe(streams.length - 1);
    watch.stop();
    await watch.done;
  });

  it("ends with onReset, and never reconnects, when its cursor is older than the deletions kept", async () => {
    const { client } = await signedUp("watch-reset", stack.baseUrl);
    const { cursor } = await client.notes.changes();
    const doomed = await client.notes.create({ title: "gone long ago" });
    await client.notes.delete(doomed.id);
    await stack.sql`update public.note_tombstones set deleted_at = now() - interval '31 days'`;
    await expect.poll(() => apiError(client.notes.changes({ since: cursor })).then((error) => error.code), {
      timeout: 10_000,
    }).toBe("cursor_expired");
    let resets = 0;
    const watch = watching(client, { since: cursor, onReset: () => void resets++ });
    await expect(watch.done).resolves.toBeUndefined();
    expect(resets).toBe(1);
    expect(watch.changes).toEqual([]);
    expect(watch.statuses).toEqual(["connecting"]);
  });

  it("throws, and stops, once the session has ended: the stream ends, and its refresh is refused", async () => {
    const { client: owner, email } = await signedUp("watch-signed-out", stack.baseUrl);
    const ended: NotesApiError[] = [];
    const client = createNotesClient({ url: stack.baseUrl, anonKey, onUnauthorized: (error) => ended.push(error) });
    client.setSession(owner.session);
    const watch = watching(client);
    await expect.poll(() => watch.readies.length).toBe(1);
    const elsewhere = createNotesClient({ url: stack.baseUrl, anonKey });
    await elsewhere.auth.login({ email, password });
    await elsewhere.auth.signOut({ scope: "global" });
    const error = await apiError(watch.done);
    expect(error.status).toBe(401);
    expect(ended).toEqual([error]);
    expect(client.session).toBeUndefined();
  });
});

describe("an error code this client does not know", () => {
  it("is unexpected_response with the answer's status and the server's words", async () => {
    const server = await scriptedServer((_request, response) => {
      response.writeHead(400, { "Content-Type": "application/json" });
      response.end(JSON.stringify({ statusCode: 400, message: "A rule added later", code: "rule_added_later" }));
    });
    try {
      const client = createNotesClient({ url: server.url, anonKey });
      const error = await apiError(client.auth.login({ email: uniqueEmail("newer"), password }));
      expect(error).toMatchObject({ status: 400, code: "unexpected_response", message: "A rule added later" });
    } finally {
      await server.close();
    }
  });
});

describe("timeoutMs", () => {
  it("throws status 0, code timeout, when no answer comes in time, and sends nothing after", async () => {
    const server = await scriptedServer(silence);
    try {
      const client = createNotesClient({ url: server.url, anonKey, timeoutMs: 200 });
      const { error, elapsedMs } = await timedFailure(client.auth.login({ email: uniqueEmail("timed"), password }));
      expect(error).toMatchObject({ status: 0, code: "timeout" });
      expect(error.message).toBe("The notes service did not answer within 200 ms");
      // Nowhere near the 15 s default.
      expect(elapsedMs).toBeLessThan(5_000);
      await expectQuietAfterDeadline(server, 1);
    } finally {
      await server.close();
    }
  });

  it("is settable per call, and a caller's signal aborts the call with code aborted", async () => {
    const server = await scriptedServer(silence);
    try {
      const client = createNotesClient({ url: server.url, anonKey });
      client.setSession(someSession);
      const { error, elapsedMs } = await timedFailure(client.notes.list({ limit: 5, timeoutMs: 200 }));
      expect(error).toMatchObject({ status: 0, code: "timeout" });
      expect(elapsedMs).toBeLessThan(5_000);

      const controller = new AbortController();
      const aborted = client.notes.get(crypto.randomUUID(), { signal: controller.signal });
      setTimeout(() => controller.abort(), 100);
      expect(await apiError(aborted)).toMatchObject({ status: 0, code: "aborted" });
      await expectQuietAfterDeadline(server, 2);
    } finally {
      await server.close();
    }
  });

  // The first answer uses up most of the time; a retry with a budget of its own would outlast the call's deadline.
  const timeoutMs = 2_000;
  const firstAnswerMs = 1_500;

  it("bounds the retry of a create after a 503 by the same deadline", async () => {
    const server = await scriptedServer((request, response, index) => {
      if (index === 0) notesErrorAfter(firstAnswerMs, 503, "service_unavailable")(request, response);
    });
    try {
      const client = createNotesClient({ url: server.url, anonKey, timeoutMs });
      client.setSession(someSession);
      const { error, elapsedMs } = await timedFailure(client.notes.create({ title: "late" }));
      expect(error).toMatchObject({ status: 0, code: "timeout" });
      expect(server.received.map((request) => request.path)).toEqual([
        "/functions/v1/notes-create",
        "/functions/v1/notes-create",
      ]);
      expect(elapsedMs).toBeLessThan(timeoutMs + firstAnswerMs - 500);
      await expectQuietAfterDeadline(server, 2);
    } finally {
      await server.close();
    }
  });

  it("bounds the refresh after a 401 token_expired by the same deadline, and keeps the session", async () => {
    const server = await scriptedServer((request, response, index) => {
      if (index === 0) notesErrorAfter(firstAnswerMs, 401, "token_expired")(request, response);
    });
    try {
      const client = createNotesClient({ url: server.url, anonKey, timeoutMs });
      client.setSession(someSession);
      const { error, elapsedMs } = await timedFailure(client.notes.list());
      expect(error).toMatchObject({ status: 0, code: "timeout" });
      expect(elapsedMs).toBeLessThan(timeoutMs + firstAnswerMs - 500);
      // The shared refresh runs on: its answer counts as lost at half the client's timeoutMs, and it is sent
      // once more within the rest.
      await expect.poll(() => server.received.length, { timeout: timeoutMs }).toBe(3);
      expect(server.received.map((request) => request.path)).toEqual([
        "/functions/v1/notes-fetch",
        "/functions/v1/auth/refresh",
        "/functions/v1/auth/refresh",
      ]);
      // A timeout is not a lost session.
      expect(client.session).toEqual(someSession);
      await expectQuietAfterDeadline(server, 3);
    } finally {
      await server.close();
    }
  });
});

describe("the same calls through supabase-js functions.invoke", () => {
  it("runs the supabase-js example of docs/clients.md in Deno as written", async () => {
    const output = await runExample("examples/supabase-invoke.ts");
    expect(output).toMatch(/^Note created successfully$/m);
    expect(output).toMatch(/^DRAFT Groceries$/m);
    expect(output).toMatch(/^400 At least one of title or content is required$/m);
  });
});

describe("sign-in with a provider", () => {
  // A stack of its own with a real OpenID Connect provider (dev/harness/identity-provider.ts) as `local`.
  let stack: ScratchStack;
  let provider: IdentityProvider;
  const app = "http://127.0.0.1:5173/";

  beforeAll(async () => {
    let env: Record<string, string>;
    ({ provider, env } = await identityProviderForStack([app, `${app}?tab=notes`, `${app}?tab=settings`]));
    stack = await startScratchStack("client_provider", { env: { ...sharedStackLimits, BCRYPT_COST: "4", ...env } });
  });
  afterAll(async () => {
    await stack?.stop();
    await provider?.stop();
  });

  /** A page for the client: where it is, every URL it left for, and its URL as rewritten. */
  function fakePage(start = `${app}?tab=notes`) {
    let current = start;
    let verifier: string | undefined;
    const left: string[] = [];
    const navigation: BrowserNavigation = {
      url: () => current,
      assign: (to) => void left.push(to),
      replace: (to) => void (current = to),
      saveVerifier: (kept) => void (verifier = kept),
      loadVerifier: () => verifier,
    };
    return { navigation, left, url: () => current, arrive: (at: string) => void (current = at) };
  }

  /** A person at the provider with a new subject and address. */
  function newPerson() {
    const sub = `person-${crypto.randomUUID()}`;
    const email = uniqueEmail("client-provider");
    provider.setAccount({ sub, email, email_verified: true, name: "Client Provider" });
    return { sub, email };
  }

  /**
   * One browser's trip from the URL the client left for (the service's authorize URL, or a link's browser step)
   * through the provider as `sub`, back to the app: the app URL it arrives at.
   */
  async function roundTrip(leftFor: string, sub: string, options: { abort?: boolean } = {}): Promise<string> {
    const browser = new ProviderBrowser();
    const response = await browser.visit(await browser.signIn(leftFor, sub, options));
    expect(response.status, await response.clone().text()).toBe(302);
    return response.headers.get("location") ?? fail("no Location");
  }

  it("signs in: leaves for the service, and back on the app exchanges the code, keeps the session and cleans the URL", async () => {
    const person = newPerson();
    const page = fakePage();
    const client = createNotesClient({ url: stack.baseUrl, anonKey, navigation: page.navigation });
    expect(await client.identities.completeSignIn(), "an ordinary start").toEqual({ outcome: "none" });
    expect(page.url()).toBe(`${app}?tab=notes`);

    await client.identities.signIn({ provider: "local", redirectTo: `${app}?tab=notes` });
    expect(page.left).toHaveLength(1);
    const start = new URL(page.left[0]);
    expect(start.pathname).toBe("/functions/v1/auth/oauth/authorize");
    expect(Object.fromEntries(start.searchParams)).toEqual({
      provider: "local",
      redirect_to: `${app}?tab=notes`,
      code_challenge: createHash("sha256").update(page.navigation.loadVerifier() ?? "").digest("base64url"),
      code_challenge_method: "S256",
    });
    page.arrive(await roundTrip(page.left[0], person.sub));
    const code = new URL(page.url()).searchParams.get("code") ?? fail(`no code in ${page.url()}`);

    const sessions: unknown[] = [];
    client.onSessionChange((session) => sessions.push(session));
    const result = await client.identities.completeSignIn();
    expect(result).toMatchObject({ outcome: "signed_in", mfaRequired: false });
    expect(page.url(), "the code is gone from the URL, the app's own query kept").toBe(`${app}?tab=notes`);
    expect(page.navigation.loadVerifier(), "the verifier served its one exchange").toBeUndefined();
    expect(client.session?.payload).toMatchObject({ email: person.email, name: "Client Provider", isVerified: true });
    expect(sessions).toHaveLength(1);
    expect((await client.auth.getUser()).email).toBe(person.email);
    const { identities, hasPassword } = await client.identities.list();
    expect(hasPassword).toBe(false);
    expect(identities).toMatchObject([{ provider: "local", email: person.email }]);

    // The code works once, and only with this tab's verifier: another page that got it signs nobody in.
    const kept = fakePage(`${app}?code=${encodeURIComponent(code)}`);
    kept.navigation.saveVerifier("another-tabs-verifier-of-at-least-forty-three-characters-long");
    const again = createNotesClient({ url: stack.baseUrl, anonKey, navigation: kept.navigation });
    const spent = await apiError(again.identities.completeSignIn());
    expect(kept.url(), "removed before the exchange, so a reload does not send it again").toBe(app);
    expect(spent).toMatchObject({ status: 400, code: "invalid_code" });
    expect(again.session).toBeUndefined();
  });

  it("does not send a code that reached a tab which started no sign-in", async () => {
    // An attacker's own sign-in, with the attacker's own verifier, whose return URL the attacker hands this browser.
    const attacker = newPerson();
    const attackersVerifier = randomBytes(32).toString("base64url");
    const start = `${stack.baseUrl}/auth/oauth/authorize?${new URLSearchParams({
      provider: "local",
      redirect_to: app,
      code_challenge: createHash("sha256").update(attackersVerifier).digest("base64url"),
      code_challenge_method: "S256",
    })}`;
    const page = fakePage(await roundTrip(start, attacker.sub));
    const code = new URL(page.url()).searchParams.get("code") ?? fail("no code");
    const client = createNotesClient({ url: stack.baseUrl, anonKey, navigation: page.navigation });
    expect(await client.identities.completeSignIn()).toMatchObject({ outcome: "error", error: "not_started_here" });
    expect(client.session).toBeUndefined();
    expect(page.url()).toBe(app);
    // Not sent: the code was not spent by this page.
    const exchanged = await fetch(`${stack.baseUrl}/auth/oauth/token`, {
      method: "POST",
      headers: { apikey: anonKey, "content-type": "application/json" },
      body: JSON.stringify({ code, codeVerifier: attackersVerifier }),
    });
    expect(exchanged.status).toBe(200);
  });

  it("answers the provider's refusal as an error with its code, and cleans the URL", async () => {
    const person = newPerson();
    const page = fakePage();
    const client = createNotesClient({ url: stack.baseUrl, anonKey, navigation: page.navigation });
    await client.identities.signIn({ provider: "local", redirectTo: app });
    page.arrive(await roundTrip(page.left[0], person.sub, { abort: true }));
    const result = await client.identities.completeSignIn();
    expect(result).toMatchObject({ outcome: "error", error: "access_denied" });
    expect(result.outcome === "error" && result.description).toBeTruthy();
    expect(page.url()).toBe(app);
    expect(client.session).toBeUndefined();
  });

  it("says identity_not_linked for the address of an account with a password; linked, the provider signs in to it; unlinked, no more", async () => {
    const person = newPerson();
    const owner = createNotesClient({ url: stack.baseUrl, anonKey, navigation: fakePage().navigation });
    await owner.auth.register({ name: "Owner", email: person.email, password });

    const visitor = fakePage();
    const stranger = createNotesClient({ url: stack.baseUrl, anonKey, navigation: visitor.navigation });
    await stranger.identities.signIn({ provider: "local", redirectTo: app });
    visitor.arrive(await roundTrip(visitor.left[0], person.sub));
    expect(await stranger.identities.completeSignIn()).toMatchObject({
      outcome: "error",
      error: "identity_not_linked",
    });

    // Having proved it is them, the owner links without the password; the page leaves for the provider.
    const settings = fakePage(`${app}?tab=settings`);
    const linking = createNotesClient({ url: stack.baseUrl, anonKey, navigation: settings.navigation });
    linking.setSession(owner.session);
    await linking.auth.reauthenticate({ password });
    const { url: linkUrl } = await linking.identities.link(
      { provider: "local", redirectTo: `${app}?tab=settings` },
      { navigate: true },
    );
    expect(settings.left).toEqual([linkUrl]);
    settings.arrive(await roundTrip(linkUrl, person.sub));
    expect(new URL(settings.url()).searchParams.get("link_code"), "the callback hands a link code").toBeTruthy();
    expect(await linking.identities.completeSignIn()).toMatchObject({
      outcome: "linked",
      provider: "local",
      identity: { provider: "local", email: person.email },
    });
    expect(settings.url()).toBe(`${app}?tab=settings`);
    const { identities, hasPassword } = await linking.identities.list();
    expect(hasPassword).toBe(true);
    expect(identities).toMatchObject([{ provider: "local", email: person.email }]);

    const back = fakePage();
    const provided = createNotesClient({ url: stack.baseUrl, anonKey, navigation: back.navigation });
    await provided.identities.signIn({ provider: "local", redirectTo: app });
    back.arrive(await roundTrip(back.left[0], person.sub));
    const signedIn = await provided.identities.completeSignIn();
    expect(signedIn.outcome === "signed_in" && signedIn.session.payload.id).toBe(owner.session?.payload.id);

    expect(await linking.identities.unlink(identities[0].id)).toEqual({ id: identities[0].id });
    expect((await linking.identities.list()).identities).toEqual([]);
    expect(await apiError(linking.identities.unlink(identities[0].id))).toMatchObject({
      status: 404,
      code: "identity_not_found",
    });
  });

  it("refuses to unlink an account's only way to sign in, and to link without the password or a proof", async () => {
    const person = newPerson();
    const page = fakePage();
    const client = createNotesClient({ url: stack.baseUrl, anonKey, navigation: page.navigation });
    await client.identities.signIn({ provider: "local", redirectTo: app });
    page.arrive(await roundTrip(page.left[0], person.sub));
    await client.identities.completeSignIn();
    const [only] = (await client.identities.list()).identities;
    expect(await apiError(client.identities.unlink(only.id))).toMatchObject({
      status: 403,
      code: "reauthentication_required",
    });
    // The proof of an account without a password: a new sign-in at its provider, which this page leaves for.
    const { url: proofUrl } = await client.identities.reauthenticate(
      { provider: "local", redirectTo: app },
      { navigate: true },
    );
    expect(page.left.at(-1)).toBe(proofUrl);
    page.arrive(await roundTrip(proofUrl, person.sub));
    expect(await client.identities.completeSignIn()).toEqual({ outcome: "reauthenticated", provider: "local" });
    expect(new URL(page.url()).searchParams.get("reauthenticated"), "the URL is cleaned").toBeNull();
    expect(await apiError(client.identities.unlink(only.id))).toMatchObject({
      status: 409,
      code: "last_sign_in_method",
    });

    const { session } = await signedUp("stale-link", stack.baseUrl).then(({ client: made }) => made);
    const stale = createNotesClient({ url: stack.baseUrl, anonKey, navigation: page.navigation });
    stale.setSession(session);
    const left = page.left.length;
    const refused = await apiError(stale.identities.link({ provider: "local", redirectTo: app }, { navigate: true }));
    expect(refused).toMatchObject({ status: 400, code: "invalid_request" });
    expect(refused.fields).toEqual([{ field: "password", message: "password is required" }]);
    expect(stale.session, "a password asked for is no ended session").toBeDefined();
    expect(page.left).toHaveLength(left);
    const started = await stale.identities.link({ provider: "local", redirectTo: app, password });
    expect(new URL(started.url).href.startsWith(`${stack.baseUrl}/auth/identities/link/authorize?flow=`)).toBe(true);
  });

  it("needs a page to navigate, where none is given and there is none", async () => {
    const client = createNotesClient({ url: stack.baseUrl, anonKey });
    await expect(client.identities.signIn({ provider: "local", redirectTo: app })).rejects.toThrow(/navigation/);
    await expect(client.identities.signInUrl({ provider: "local", redirectTo: app })).rejects.toThrow(/navigation/);
    expect(await client.identities.completeSignIn()).toEqual({ outcome: "none" });
  });
});
