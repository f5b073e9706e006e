/**
 * Every status that openapi.json documents for each operation, driven on a
 * stack of its own and checked against the document, status and body: the
 * contract lists what the service answers, and the service answers what the
 * contract lists. The one exception is 500, documented for bugs, which no
 * request can cause. The stack trusts `x-forwarded-for`, so every request
 * comes from an address of its own unless it is there to reach a limit, and
 * it reaches its database through a proxy the 503s cut. Every error answer
 * must carry a documented `code` that goes with its status, and the main
 * cases the code named here.
 */
import { createHash, randomBytes } from "node:crypto";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  activation,
  attachmentUpload,
  bearer,
  enrollment,
  identityLinkStart,
  identityList,
  limits,
  notesSuccessEnvelope,
} from "../supabase/functions/_shared/contract/mod.ts";
import { codeAt } from "../supabase/functions/_shared/auth/totp.ts";
import { awayFromStepEdge, period } from "./support/second-factor.ts";
import { operations, type OperationSpec, pathOf } from "../shared/operations.ts";
import {
  type ApiRequest,
  type ApiResponse,
  freshAddress,
  readMailedCode,
  readResetCode,
  uniqueEmail,
} from "./support/api.ts";
import { grantAdmin } from "./support/admin.ts";
import { sessionEnvelope } from "./support/auth.ts";
import { changeListEnvelope, noteEnvelope } from "./support/notes.ts";
import { expectDocumented, observed, openApiDocument } from "./support/openapi.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";
import { type IdentityProvider, identityProviderForStack, ProviderBrowser } from "../dev/harness/identity-provider.ts";
import { newPkce } from "./support/provider-journeys.ts";
import { expectErrorCode } from "./support/error-codes.ts";
import type { ErrorCode } from "../supabase/functions/_shared/contract/error-codes.ts";
import { testAnonKey } from "../dev/harness/stack.ts";
import { SoftAuthenticator } from "../dev/harness/passkey-authenticator.ts";

const password = "correct horse battery";
let stack: ScratchStack;
/** The provider the stack signs in with, as `local`: a real OpenID Connect provider (dev/harness/identity-provider.ts). */
let provider: IdentityProvider;
/** The app URL a provider sign-in or link returns to (OAUTH_REDIRECT_URLS). */
const app = "http://127.0.0.1:5173/signed-in";

beforeAll(async () => {
  let env: Record<string, string>;
  ({ provider, env } = await identityProviderForStack([app]));
  stack = await startScratchStack("statuses", {
    proxied: true,
    env: {
      ...env,
      TRUST_PROXY: "true",
      BCRYPT_COST: "4",
      BODY_TIMEOUT_MS: "300",
      SIGNUP_MAX_PER_ADDRESS: "1",
      LOGIN_MAX_ATTEMPTS_PER_ADDRESS: "1",
      RESET_CODE_MAX_ATTEMPTS_PER_ADDRESS: "1",
      RESET_REQUEST_MAX_PER_ADDRESS: "1",
      RESET_MAIL_MIN_INTERVAL_SECONDS: "0",
      REFRESH_MAX_PER_ADDRESS: "1",
      VERIFY_MAX_PER_ADDRESS: "1",
      STREAM_MAX_PER_USER: "1",
      ANONYMOUS_MAX_PER_ADDRESS: "1",
    },
  });
});

afterAll(async () => {
  await stack?.stop();
  await provider?.stop();
});

/**
 * Calls `spec`'s path from `address` (a fresh one by default), expects
 * `status`, and checks the answer against the document; an error answer must
 * carry a documented code, and `code` when given.
 */
async function documented(
  spec: OperationSpec,
  status: number,
  request: ApiRequest & { query?: string; address?: string; code?: ErrorCode; at?: string } = {},
) {
  // `at`: the path itself where the document's has parameters (`/auth/oauth/callback/{provider}`).
  const { query = "", address = freshAddress(), code, at = pathOf(spec), ...rest } = request;
  const response = await stack.call(`${at}${query}`, {
    method: spec.method,
    ...rest,
    headers: { "x-forwarded-for": address, ...rest.headers },
  });
  expect(response.status, response.text).toBe(status);
  expectDocumented(request.method ?? spec.method, pathOf(spec), response);
  if (status >= 400) expectErrorCode(response, code);
  return response;
}

/**
 * Opens `GET /notes-stream` with `token` (from `since`, when given) and reads
 * it up to its ready event: the 200 the document lists as an event stream,
 * whose body does not end by itself, so it cannot be read whole.
 */
async function documentedStream(token: string, since?: string): Promise<void> {
  const spec = operations.streamChanges;
  const documentedAs = openApiDocument.paths[pathOf(spec)].get.responses["200"].content ?? {};
  expect(Object.keys(documentedAs)).toEqual(["text/event-stream"]);
  const reading = new AbortController();
  const query = since === undefined ? "" : `?since=${encodeURIComponent(since)}`;
  const response = await fetch(`${stack.baseUrl}${pathOf(spec)}${query}`, {
    headers: { Authorization: bearer(token), "x-forwarded-for": freshAddress() },
    signal: reading.signal,
  });
  try {
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const reader = (response.body ?? fail("no body")).pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!/^event: ready$/m.test(text)) {
      const { done, value } = await reader.read();
      if (done) fail(`the stream ended before its ready event: ${text}`);
      text += value;
    }
  } finally {
    reading.abort();
  }
  const key = `GET ${pathOf(spec)}`;
  observed.set(key, (observed.get(key) ?? new Set()).add(200));
}

function fail(message: string): never {
  throw new Error(message);
}

/**
 * Sends the headers of a request announcing a body, then only part of it,
 * and answers what the stack says once its body deadline passes.
 */
function withSlowBody(spec: OperationSpec, headers: Record<string, string>): Promise<ApiResponse> {
  const url = new URL(stack.baseUrl);
  const head = [
    `${spec.method} ${url.pathname}${pathOf(spec)} HTTP/1.1`,
    `Host: ${url.host}`,
    "Content-Type: application/json",
    "Content-Length: 100",
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.write(`${head.join("\r\n")}\r\n\r\n{"a":`));
    let raw = "";
    socket.setEncoding("utf8").on("data", (chunk) => {
      raw += chunk;
      // The answer may come in pieces: wait for the whole head, then for as much body as it announces.
      const headEnd = raw.indexOf("\r\n\r\n");
      if (headEnd < 0) return;
      const [header, body] = [raw.slice(0, headEnd), raw.slice(headEnd + 4)];
      const length = Number(/content-length: (\d+)/i.exec(header)?.[1] ?? Number.NaN);
      if (!(body.length >= length)) return;
      socket.destroy();
      const lines = header.split("\r\n");
      const responseHeaders = new Headers();
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(":");
        responseHeaders.append(line.slice(0, colon), line.slice(colon + 1).trim());
      }
      resolve({ status: Number(lines[0].split(" ")[1]), headers: responseHeaders, body: JSON.parse(body), text: body });
    }).on("error", reject);
  });
}

interface Caller {
  email: string;
  token: string;
  refreshToken: string;
  noteId: string;
}

async function signedUpCaller(): Promise<Caller> {
  const email = uniqueEmail("statuses");
  const registered = await documented(operations.register, 201, { body: { name: "Statuses", email, password } });
  const { accessToken: token, refreshToken } = sessionEnvelope.parse(registered.body).data;
  const created = await documented(operations.createNote, 201, { token, body: { title: "kept" } });
  return { email, token, refreshToken, noteId: noteEnvelope.parse(created.body).data.id };
}

/** Options a registration could have been given, with a challenge no statement stored. */
const madeUpCreationOptions = { challenge: "a-challenge-never-given", rp: { id: "localhost" }, user: { id: "AAAA" } };

/** `data.options` of a passkey ceremony's options, asked with `token` when given. */
// deno-lint-ignore no-explicit-any
async function passkeyOptionsOf(spec: OperationSpec, token?: string): Promise<any> {
  const answered = await documented(spec, 200, { token, body: {} });
  return (answered.body as { data: { options: unknown } }).data.options;
}

/** Plants `count` passkeys of the account in SQL, as that many registrations would. */
async function plantPasskeys(userId: string, count: number): Promise<void> {
  for (let index = 0; index < count; index += 1) {
    await stack.sql`insert into app.passkeys (user_id, credential_id, public_key, device_type, backed_up, aaguid, name,
                                              trusted)
                    values (${userId}, ${`planted-credential-${crypto.randomUUID()}`}, ${Buffer.alloc(32)},
                            'multiDevice', true, '00000000-0000-0000-0000-000000000000', 'Planted', true)`;
  }
}

/** A signed-up caller with a passkey (a software authenticator's), registered after a proof. */
async function passkeyCaller() {
  const caller = await signedUpCaller();
  await documented(operations.reauthenticate, 200, { token: caller.token, body: { password } });
  const authenticator = new SoftAuthenticator();
  const registered = await documented(operations.passkeysRegister, 201, {
    token: caller.token,
    body: { response: authenticator.create(await passkeyOptionsOf(operations.passkeysRegisterOptions, caller.token)) },
  });
  const { passkey } = (registered.body as { data: { passkey: { id: string } } }).data;
  const userId = sessionEnvelope.parse(
    (await documented(operations.login, 200, { body: { email: caller.email, password } })).body,
  ).data.payload.id;
  return { ...caller, userId, authenticator, passkeyId: passkey.id };
}

/** A signed-up caller whose address is verified with the mailed code: enrolling a factor needs it. */
async function verifiedCaller(): Promise<Caller> {
  const caller = await signedUpCaller();
  const code = await readMailedCode(caller.email, { kind: "verification", logFile: stack.logFile });
  await documented(operations.verifyEmail, 200, { token: caller.token, body: { email: caller.email, code } });
  return caller;
}

/** A 6-digit code that the authenticator with `secret` shows at none of the steps accepted now. */
function wrongCode(secret: string): string {
  const near = [-1, 0, 1].map((steps) => codeAt(secret, Date.now() + steps * period));
  return ["000000", "111111", "222222", "333333"].find((code) => !near.includes(code)) as string;
}

/** Lets the factor accept any step again, as if its last accepted step were long past. */
async function forgetLastStep(factorId: string) {
  await stack.sql`update app.second_factors set last_step = null where id = ${factorId}`;
}

interface EnrolledCaller extends Caller {
  factorId: string;
  secret: string;
  recoveryCodes: string[];
  /** The access token of a sign-in that has not made the second step. */
  firstStep: string;
}

/** A signed-up caller that enrolled and activated a factor: `token` has made the second step, `firstStep` not. */
async function enrolledCaller(): Promise<EnrolledCaller> {
  const caller = await verifiedCaller();
  const enrolled = await documented(operations.mfaEnroll, 201, { token: caller.token, body: { password } });
  const { factorId, secret } = enrollment.parse((enrolled.body as { data: unknown }).data);
  await awayFromStepEdge();
  const activated = await documented(operations.mfaActivate, 200, {
    token: caller.token,
    body: { factorId, code: codeAt(secret, Date.now()) },
  });
  const { accessToken, refreshToken, recoveryCodes } = activation.parse((activated.body as { data: unknown }).data);
  await forgetLastStep(factorId);
  const signedIn = sessionEnvelope.parse(
    (await documented(operations.login, 200, { body: { email: caller.email, password } })).body,
  );
  expect(signedIn.data.mfaRequired).toBe(true);
  return {
    ...caller,
    token: accessToken,
    refreshToken,
    factorId,
    secret,
    recoveryCodes,
    firstStep: signedIn.data.accessToken,
  };
}

/** A person at the provider with a new subject and address. */
function newPerson(): { sub: string; email: string } {
  const sub = `person-${crypto.randomUUID()}`;
  const email = uniqueEmail("provider");
  provider.setAccount({ sub, email, email_verified: true, name: "Statuses Provider" });
  return { sub, email };
}

/** The app's PKCE pair, whose challenge every provider sign-in of this file starts with. */
const pkce = newPkce();

/** The query of a provider sign-in's start: the stack's one provider, back to the app, with the app's challenge. */
const authorizeQuery = `?${new URLSearchParams({
  provider: "local",
  redirect_to: app,
  code_challenge: pkce.challenge,
  code_challenge_method: "S256",
})}`;

/** The callback of the stack's provider `local`, as its path and its URL. */
const callbackPath = "/auth/oauth/callback/local";

/**
 * Sends `browser`, as `sub`, through a provider sign-in or link whose start (documented, fetched for it) answered
 * `started`, and loads the callback in it, documented: the app's URL the callback sends it to.
 */
async function throughProvider(started: ApiResponse, sub: string, browser: ProviderBrowser): Promise<URL> {
  const location = started.headers.get("location") ?? fail("no Location");
  browser.keep(`${stack.baseUrl}${callbackPath}`, started.headers);
  const callback = await browser.signIn(location, sub);
  expect(callback.href.startsWith(`${stack.baseUrl}${callbackPath}?`), callback.href).toBe(true);
  const back = await documented(operations.oauthCallback, 302, {
    apiKey: null,
    at: callbackPath,
    query: callback.search,
    headers: { cookie: browser.cookieFor(callback) },
  });
  return new URL(back.headers.get("location") ?? fail("no Location"));
}

/** A whole provider sign-in of `sub`, each step documented, with `codeChallenge` (the file's app's by default). */
async function providerSignIn(sub: string, codeChallenge = pkce.challenge): Promise<URL> {
  const query = `?${new URLSearchParams({
    provider: "local",
    redirect_to: app,
    code_challenge: codeChallenge,
    code_challenge_method: "S256",
  })}`;
  const started = await documented(operations.oauthAuthorize, 302, { apiKey: null, query });
  return await throughProvider(started, sub, new ProviderBrowser());
}

/** The link_code that a link started by `token` brings back once `sub` signed in at the provider, each step documented. */
async function linkCode(token: string, sub: string): Promise<string> {
  const started = await documented(operations.linkIdentity, 200, {
    token,
    body: { provider: "local", redirectTo: app, password },
  });
  const { url } = identityLinkStart.parse((started.body as { data: unknown }).data);
  const opened = await documented(operations.linkIdentityAuthorize, 302, {
    apiKey: null,
    query: new URL(url).search,
  });
  const location = await throughProvider(opened, sub, new ProviderBrowser());
  return location.searchParams.get("link_code") ?? fail(`no link_code in ${location.href}`);
}

/** Whether `spec` takes a bearer token: every notes operation, and the auth ones that act for a signed-in user. */
const takesToken = (spec: OperationSpec) => spec.envelope === "notes" || spec.bearer === true;

/** What a request of `spec` needs besides its body to get past authentication. */
function credentials(spec: OperationSpec, caller: Caller): ApiRequest {
  return takesToken(spec) ? { token: caller.token } : {};
}

describe("every documented status of every operation", () => {
  it("is answered for what any operation can meet: 400 for an unknown query parameter, 401, 405, and for bodies 408, 413 and 415", async () => {
    const caller = await signedUpCaller();
    for (const spec of Object.values(operations) as OperationSpec[]) {
      await documented(spec, 405, { method: "PUT", ...credentials(spec, caller), code: "method_not_allowed" });
      if (spec === operations.oauthCallback) {
        // The provider's return takes parameters of the provider's own: without a state it is no sign-in of here.
        const unknown = await documented(spec, 400, { apiKey: null, query: "?bogus=1", code: "invalid_state" });
        expect(unknown.body, pathOf(spec)).toMatchObject({ fields: [{ field: "state" }] });
      } else {
        const unknown = await documented(spec, 400, {
          ...credentials(spec, caller),
          query: "?bogus=1",
          body: spec.body ? {} : undefined,
          code: "invalid_request",
        });
        expect(unknown.body, pathOf(spec)).toMatchObject({
          fields: [{ field: "bogus", message: "bogus is not a query parameter of this endpoint" }],
        });
      }
      // A browser navigation takes no credentials, so it has no 401 to answer.
      if (spec.browserNavigation) continue;
      await documented(
        spec,
        401,
        takesToken(spec) ? { code: "token_missing" } : { apiKey: null, body: {}, code: "invalid_api_key" },
      );
      if (spec.envelope === "auth") {
        await documented(spec, 401, { ...credentials(spec, caller), apiKey: "not-the-key", code: "invalid_api_key" });
      }
      if (!spec.body) continue;
      const auth: Record<string, string> = {
        ...(spec.envelope === "auth" ? { apikey: testAnonKey } : {}),
        ...(takesToken(spec) ? { Authorization: caller.token } : {}),
      };
      const slow = await withSlowBody(spec, { ...auth, "x-forwarded-for": freshAddress() });
      expect(slow.status, slow.text).toBe(408);
      expectDocumented(spec.method, pathOf(spec), slow);
      expectErrorCode(slow, "request_timeout");
      await documented(spec, 413, {
        ...credentials(spec, caller),
        body: { title: "x".repeat(limits.bodyMaxBytes) },
        code: "payload_too_large",
      });
      await documented(spec, 415, {
        ...credentials(spec, caller),
        body: "{}",
        headers: { "Content-Type": "text/plain" },
        code: "unsupported_media_type",
      });
      await documented(spec, 400, { ...credentials(spec, caller), body: "{", code: "invalid_request" });
    }
  });

  it("is answered for each operation's own outcomes", async () => {
    const caller = await signedUpCaller();
    const { email, noteId } = caller;
    let token = caller.token;
    const other = await signedUpCaller();

    await documented(operations.register, 400, {
      body: { name: "Short", email: uniqueEmail(), password: "short" },
      code: "invalid_request",
    });
    await documented(operations.register, 409, { body: { name: "Taken", email, password }, code: "email_taken" });
    const signUps = freshAddress();
    await documented(operations.register, 201, {
      body: { name: "One", email: uniqueEmail(), password },
      address: signUps,
    });
    await documented(operations.register, 429, {
      body: { name: "Two", email: uniqueEmail(), password },
      address: signUps,
      code: "rate_limited",
    });

    await documented(operations.login, 200, { body: { email, password } });
    await documented(operations.login, 400, { body: { email } });
    await documented(operations.login, 401, {
      body: { email, password: "wrong password" },
      code: "invalid_credentials",
    });
    await documented(operations.login, 401, {
      body: { email: uniqueEmail("nobody"), password },
      code: "invalid_credentials",
    });
    const logins = freshAddress();
    await documented(operations.login, 200, { body: { email, password }, address: logins });
    await documented(operations.login, 429, { body: { email, password }, address: logins, code: "rate_limited" });

    await documented(operations.refreshSession, 400, { body: { refreshToken: 42 } });
    const refreshes = freshAddress();
    const refreshed = await documented(operations.refreshSession, 200, {
      body: { refreshToken: other.refreshToken },
      address: refreshes,
    });
    await documented(operations.refreshSession, 429, {
      body: { refreshToken: sessionEnvelope.parse(refreshed.body).data.refreshToken },
      address: refreshes,
    });
    await documented(operations.refreshSession, 401, {
      body: { refreshToken: "not-a-refresh-token" },
      code: "refresh_token_invalid",
    });
    await documented(operations.getUser, 200, { token });
    const listed = await documented(operations.listSessions, 200, { token });
    const [ownSession] = (listed.body as { data: { sessions: { id: string }[] } }).data.sessions;
    await documented(operations.revokeSession, 400, { token });
    await documented(operations.revokeSession, 404, {
      token: other.token,
      query: `?id=${ownSession.id}`,
      code: "session_not_found",
    });
    await documented(operations.signOut, 400, { token, body: { scope: "everywhere" } });
    const laptop = sessionEnvelope.parse((await documented(operations.login, 200, { body: { email, password } })).body);
    await documented(operations.revokeSession, 200, { token, query: `?id=${laptop.data.refreshToken.split(".")[0]}` });
    await documented(operations.signOut, 200, { token: other.token, body: { scope: "others" } });
    const phone = sessionEnvelope.parse((await documented(operations.login, 200, { body: { email, password } })).body);
    token = phone.data.accessToken;

    await documented(operations.resendVerification, 200, { body: { email } });
    await documented(operations.resendVerification, 400, { body: { email: "not an email" } });
    const resends = freshAddress();
    await documented(operations.resendVerification, 200, { body: { email }, address: resends });
    await documented(operations.resendVerification, 429, { body: { email }, address: resends });
    const verification = await readMailedCode(email, { kind: "verification", logFile: stack.logFile });
    await documented(operations.verifyEmail, 400, {
      body: { email, code: verification === "000000" ? "111111" : "000000", password },
      code: "invalid_code",
    });
    const verifications = freshAddress();
    await documented(operations.verifyEmail, 401, {
      body: { email, code: verification },
      code: "credentials_required",
    });
    await documented(operations.verifyEmail, 200, {
      body: { email, code: verification, password },
      address: verifications,
    });
    await documented(operations.verifyEmail, 429, {
      body: { email, code: verification, password },
      address: verifications,
    });

    const change = { currentPassword: password, newPassword: password };
    await documented(operations.changePassword, 400, { token, body: { ...change, newPassword: "short" } });
    await documented(operations.changePassword, 401, {
      token,
      body: { ...change, currentPassword: "wrong password" },
      code: "invalid_credentials",
    });
    const changed = await documented(operations.changePassword, 200, { token, body: change });
    token = sessionEnvelope.parse(changed.body).data.accessToken;
    // The new session's re-entered passwords are limited (5 a window): past them even the right one is refused.
    for (let guess = 0; guess < 5; guess++) {
      await documented(operations.changePassword, 401, {
        token,
        body: { ...change, currentPassword: `guess ${guess}` },
      });
    }
    await documented(operations.changePassword, 429, { token, body: change });

    await documented(operations.createNote, 400, { token, body: {}, code: "invalid_request" });
    const keyed = { token, headers: { "Idempotency-Key": `statuses-${noteId}` } };
    await documented(operations.createNote, 201, { ...keyed, body: { title: "once" } });
    await documented(operations.createNote, 201, { ...keyed, body: { title: "once" } });
    await documented(operations.createNote, 422, {
      ...keyed,
      body: { title: "another" },
      code: "idempotency_key_reused",
    });
    await documented(operations.createNote, 400, { token, body: { title: "x" }, headers: { "Idempotency-Key": "" } });
    const read = await documented(operations.getNote, 200, { token, query: `?id=${noteId}` });
    await documented(operations.getNote, 400, { token });
    await documented(operations.getNote, 404, { token: other.token, query: `?id=${noteId}`, code: "note_not_found" });
    const version = noteEnvelope.parse(read.body).data.updatedAt;
    await documented(operations.listNotes, 200, { token, query: "?limit=5" });
    await documented(operations.listNotes, 400, { token, query: "?limit=0" });
    const feed = await documented(operations.listChanges, 200, { token });
    const cursor = changeListEnvelope.parse(feed.body).data.cursor;
    await documented(operations.listChanges, 400, { token, query: "?since=not-a-cursor", code: "invalid_cursor" });
    await documentedStream(token, cursor);
    await documented(operations.streamChanges, 400, { token, query: "?since=not-a-cursor", code: "invalid_cursor" });
    // One open stream is all this stack allows an account (STREAM_MAX_PER_USER): the next waits until it ends.
    const held = new AbortController();
    const open = await fetch(`${stack.baseUrl}${pathOf(operations.streamChanges)}`, {
      headers: { Authorization: bearer(other.token), "x-forwarded-for": freshAddress() },
      signal: held.signal,
    });
    expect(open.status).toBe(200);
    await documented(operations.streamChanges, 429, { token: other.token, code: "rate_limited" });
    held.abort();
    await documented(operations.saveNote, 200, { token, body: { id: noteId, status: "PUBLISHED" } });
    await documented(operations.saveNote, 400, { token, body: { id: noteId } });
    await documented(operations.saveNote, 404, { token: other.token, body: { id: noteId, title: "mine now" } });
    // The save above moved the note past `version`, so naming it now is a conflict.
    await documented(operations.saveNote, 409, {
      token,
      body: { id: noteId, title: "stale", expectedUpdatedAt: version },
      code: "note_conflict",
    });
    await documented(operations.deleteNote, 409, { token, query: `?id=${noteId}&expectedUpdatedAt=${version}` });
    await documented(operations.deleteNote, 400, { token });
    await documented(operations.deleteNote, 404, { token: other.token, query: `?id=${noteId}` });
    await documented(operations.deleteNote, 200, { token: other.token, query: `?id=${other.noteId}` });
    // The caller's own deletion, its tombstone aged past NOTES_TOMBSTONE_DAYS and pruned by the stack's schedule.
    const doomed = noteEnvelope.parse(
      (await documented(operations.createNote, 201, { token, body: { title: "x" } })).body,
    );
    await documented(operations.deleteNote, 200, { token, query: `?id=${doomed.data.id}` });
    await stack.sql`update public.note_tombstones set deleted_at = now() - interval '31 days'`;
    await expect.poll(async () => (await stack.call(`/notes-changes?since=${cursor}`, { token })).status, {
      timeout: 10_000,
    }).toBe(410);
    await documented(operations.listChanges, 410, { token, query: `?since=${cursor}`, code: "cursor_expired" });

    // Last: setting the password revokes the token the notes calls above use.
    await documented(operations.requestPasswordReset, 200, { body: { email } });
    await documented(operations.requestPasswordReset, 400, { body: { email: "not an email" } });
    const resetRequests = freshAddress();
    await documented(operations.requestPasswordReset, 200, { body: { email: uniqueEmail() }, address: resetRequests });
    await documented(operations.requestPasswordReset, 429, { body: { email: uniqueEmail() }, address: resetRequests });
    const code = await readResetCode(email, 0, stack.logFile);
    const reset = { email, password: "a brand new secret", code };
    const wrongCode = code === "000000" ? "111111" : "000000";
    await documented(operations.createPassword, 400, { body: { ...reset, code: wrongCode }, code: "invalid_code" });
    await documented(operations.createPassword, 404, {
      body: { ...reset, email: uniqueEmail("nobody") },
      code: "user_not_found",
    });
    const codeTries = freshAddress();
    await documented(operations.createPassword, 400, { body: { ...reset, code: wrongCode }, address: codeTries });
    await documented(operations.createPassword, 429, { body: reset, address: codeTries });
    await documented(operations.createPassword, 200, { body: reset });

    // A code by email: its requests share the reset requests' limit per address, its tries create-password's.
    await documented(operations.sendSignInCode, 200, { body: { email } });
    await documented(operations.sendSignInCode, 400, { body: { email: "not an email" } });
    await documented(operations.sendSignInCode, 429, { body: { email: uniqueEmail() }, address: resetRequests });
    const signInCode = await readMailedCode(email, { kind: "sign-in", logFile: stack.logFile });
    const wrongSignInCode = signInCode === "00000000" ? "11111111" : "00000000";
    await documented(operations.signInWithCode, 400, { body: { email, code: wrongSignInCode }, code: "invalid_code" });
    await documented(operations.signInWithCode, 429, { body: { email, code: signInCode }, address: codeTries });
    await documented(operations.signInWithCode, 200, { body: { email, code: signInCode } });
  });

  it("is answered the same on each auth function's own path (/auth-login) as on the interface's (/auth/login)", async () => {
    const caller = await signedUpCaller();
    for (const spec of Object.values(operations) as OperationSpec[]) {
      if (!spec.interfacePath || !spec.body) continue;
      const response = await stack.call(`/${spec.functionName}`, {
        ...credentials(spec, caller),
        method: spec.method,
        body: "[]",
        headers: { "x-forwarded-for": freshAddress() },
      });
      expect(response.status, response.text).toBe(400);
      expectDocumented(spec.method, spec.interfacePath, response);
      expectErrorCode(response, "invalid_request");
    }
  });

  it("answers the security log's and the admin operations' own outcomes", async () => {
    const user = await signedUpCaller();
    const admin = await signedUpCaller();
    await grantAdmin(stack, admin.email);
    await documented(operations.listSecurityEvents, 200, { token: user.token, query: "?limit=5" });
    await documented(operations.listSecurityEvents, 400, { token: user.token, query: "?before=0" });
    await documented(operations.listUsers, 200, { token: admin.token, query: "?status=ACTIVE" });
    await documented(operations.listUsers, 400, { token: admin.token, query: "?status=BANNED" });
    await documented(operations.listUsers, 403, { token: user.token, code: "admin_required" });
    const userId = sessionEnvelope.parse(
      (await documented(operations.login, 200, { body: { email: user.email, password } })).body,
    ).data.payload.id;
    await documented(operations.setUserStatus, 403, { token: user.token, body: { id: userId, status: "ACTIVE" } });
    await documented(operations.listAccountEvents, 403, { token: user.token, query: `?id=${userId}` });
    // Last for the user: suspending it ends its sessions.
    await documented(operations.setUserStatus, 200, { token: admin.token, body: { id: userId, status: "SUSPENDED" } });
    await documented(operations.setUserStatus, 400, { token: admin.token, body: { id: userId, status: "BANNED" } });
    await documented(operations.setUserStatus, 404, {
      token: admin.token,
      body: { id: crypto.randomUUID(), status: "ACTIVE" },
      code: "user_not_found",
    });
    const adminId = sessionEnvelope.parse(
      (await documented(operations.login, 200, { body: { email: admin.email, password } })).body,
    ).data.payload.id;
    await documented(operations.setUserStatus, 400, {
      token: admin.token,
      body: { id: adminId, status: "SUSPENDED" },
      code: "cannot_change_own_status",
    });
    const otherAdmin = await signedUpCaller();
    await grantAdmin(stack, otherAdmin.email);
    const otherAdminId = sessionEnvelope.parse(
      (await documented(operations.login, 200, { body: { email: otherAdmin.email, password } })).body,
    ).data.payload.id;
    await documented(operations.setUserStatus, 400, {
      token: admin.token,
      body: { id: otherAdminId, status: "SUSPENDED" },
      code: "cannot_suspend_admin",
    });
    await documented(operations.listAccountEvents, 200, { token: admin.token, query: `?id=${userId}` });
    await documented(operations.listAccountEvents, 400, { token: admin.token });
  });

  it("answers the second factor's own outcomes", async () => {
    const unverified = await signedUpCaller();
    await documented(operations.mfaEnroll, 403, {
      token: unverified.token,
      body: { password },
      code: "email_not_verified",
    });
    const plain = await verifiedCaller();
    const unknownFactor = crypto.randomUUID();
    await documented(operations.mfaList, 200, { token: plain.token });
    await documented(operations.mfaVerify, 404, {
      token: plain.token,
      body: { code: "123456" },
      code: "factor_not_found",
    });
    await documented(operations.mfaRecover, 404, {
      token: plain.token,
      body: { recoveryCode: "aaaaa-bbbbb-ccccc-ddddd" },
      code: "factor_not_found",
    });
    await documented(operations.mfaUnenroll, 404, {
      token: plain.token,
      body: { factorId: unknownFactor, code: "123456" },
      code: "factor_not_found",
    });
    await documented(operations.mfaRecoveryCodes, 404, {
      token: plain.token,
      body: { code: "123456" },
      code: "factor_not_found",
    });
    await documented(operations.mfaActivate, 404, {
      token: plain.token,
      body: { factorId: unknownFactor, code: "123456" },
      code: "factor_not_found",
    });
    await documented(operations.mfaEnroll, 400, { token: plain.token, body: {}, code: "invalid_request" });
    await documented(operations.mfaEnroll, 401, {
      token: plain.token,
      body: { password: "wrong password" },
      code: "invalid_credentials",
    });
    // A session's re-entered passwords are limited (5 a window): the sixth is refused, even the right one.
    const guesser = await verifiedCaller();
    for (let guess = 0; guess < 5; guess++) {
      await documented(operations.mfaEnroll, 401, { token: guesser.token, body: { password: `guess ${guess}` } });
    }
    await documented(operations.mfaEnroll, 429, { token: guesser.token, body: { password }, code: "rate_limited" });

    // A pending factor's wrong first codes count toward its lock as any others.
    const pending = enrollment.parse(
      ((await documented(operations.mfaEnroll, 201, { token: plain.token, body: { password } })).body as {
        data: unknown;
      }).data,
    );
    await documented(operations.mfaActivate, 400, {
      token: plain.token,
      body: { factorId: pending.factorId, code: "12345" },
      code: "invalid_request",
    });
    for (let guess = 0; guess < 5; guess++) {
      await documented(operations.mfaActivate, 400, {
        token: plain.token,
        body: { factorId: pending.factorId, code: wrongCode(pending.secret) },
        code: "invalid_code",
      });
    }
    await documented(operations.mfaActivate, 429, {
      token: plain.token,
      body: { factorId: pending.factorId, code: codeAt(pending.secret, Date.now()) },
      code: "rate_limited",
    });

    const owner = await enrolledCaller();
    await documented(operations.mfaEnroll, 409, { token: owner.token, body: { password }, code: "factor_exists" });
    await documented(operations.mfaList, 200, { token: owner.token });
    await documented(operations.mfaVerify, 400, {
      token: owner.firstStep,
      body: { code: wrongCode(owner.secret) },
      code: "invalid_code",
    });
    await awayFromStepEdge();
    const verified = await documented(operations.mfaVerify, 200, {
      token: owner.firstStep,
      body: { code: codeAt(owner.secret, Date.now()) },
    });
    expect(sessionEnvelope.parse(verified.body).data.mfaRequired).toBe(false);
    const second = sessionEnvelope.parse(
      (await documented(operations.login, 200, { body: { email: owner.email, password } })).body,
    ).data.accessToken;
    await documented(operations.mfaRecover, 400, {
      token: second,
      body: { recoveryCode: "aaaaa-bbbbb-ccccc-ddddd" },
      code: "invalid_code",
    });
    await documented(operations.mfaRecover, 200, { token: second, body: { recoveryCode: owner.recoveryCodes[0] } });
    await forgetLastStep(owner.factorId);
    await documented(operations.mfaRecoveryCodes, 400, {
      token: owner.token,
      body: { code: wrongCode(owner.secret) },
      code: "invalid_code",
    });
    await awayFromStepEdge();
    const replaced = await documented(operations.mfaRecoveryCodes, 200, {
      token: owner.token,
      body: { code: codeAt(owner.secret, Date.now()) },
    });
    const { recoveryCodes } = (replaced.body as { data: { recoveryCodes: string[] } }).data;
    await documented(operations.mfaUnenroll, 400, {
      token: owner.token,
      body: { factorId: owner.factorId, recoveryCode: owner.recoveryCodes[1] },
      code: "invalid_code",
    });
    await documented(operations.mfaUnenroll, 404, {
      token: owner.token,
      body: { factorId: unknownFactor, recoveryCode: recoveryCodes[0] },
      code: "factor_not_found",
    });
    await documented(operations.mfaUnenroll, 200, {
      token: owner.token,
      body: { factorId: owner.factorId, recoveryCode: recoveryCodes[0] },
    });

    // 5 wrong codes lock the factor for every operation that takes one, the right code included.
    const locked = await enrolledCaller();
    for (let guess = 0; guess < 5; guess++) {
      await documented(operations.mfaVerify, 400, {
        token: locked.firstStep,
        body: { code: wrongCode(locked.secret) },
      });
    }
    const right = codeAt(locked.secret, Date.now());
    await documented(operations.mfaVerify, 429, {
      token: locked.firstStep,
      body: { code: right },
      code: "rate_limited",
    });
    await documented(operations.mfaRecover, 429, {
      token: locked.firstStep,
      body: { recoveryCode: locked.recoveryCodes[0] },
      code: "rate_limited",
    });
    await documented(operations.mfaUnenroll, 429, {
      token: locked.token,
      body: { factorId: locked.factorId, code: right },
      code: "rate_limited",
    });
    await documented(operations.mfaRecoveryCodes, 429, {
      token: locked.token,
      body: { recoveryCode: locked.recoveryCodes[0] },
      code: "rate_limited",
    });

    // 100 wrong codes in a row (99 left by earlier lockouts) lock it until the password is reset.
    const farmed = await enrolledCaller();
    await stack.sql`update app.second_factors set consecutive_failures = 99 where id = ${farmed.factorId}`;
    await documented(operations.mfaVerify, 400, { token: farmed.firstStep, body: { code: wrongCode(farmed.secret) } });
    await documented(operations.mfaVerify, 403, {
      token: farmed.firstStep,
      body: { code: codeAt(farmed.secret, Date.now()) },
      code: "second_factor_locked",
    });
    await documented(operations.mfaRecover, 403, {
      token: farmed.firstStep,
      body: { recoveryCode: farmed.recoveryCodes[0] },
      code: "second_factor_locked",
    });
  });

  it("answers a proof given for a change of how the account signs in", async () => {
    const plain = await signedUpCaller();
    await documented(operations.reauthenticate, 200, { token: plain.token, body: { password } });
    await documented(operations.reauthenticate, 400, {
      token: plain.token,
      body: { password, code: "123456" },
      code: "invalid_request",
    });
    await documented(operations.reauthenticate, 404, {
      token: plain.token,
      body: { code: "123456" },
      code: "factor_not_found",
    });
    const guesser = await signedUpCaller();
    for (let guess = 0; guess < 5; guess++) {
      await documented(operations.reauthenticate, 401, {
        token: guesser.token,
        body: { password: `guess ${guess}` },
        code: "invalid_credentials",
      });
    }
    await documented(operations.reauthenticate, 429, {
      token: guesser.token,
      body: { password },
      code: "rate_limited",
    });
    const owner = await enrolledCaller();
    await documented(operations.reauthenticate, 403, {
      token: owner.firstStep,
      body: { password },
      code: "mfa_required",
    });
  });

  it("answers anonymous accounts' starts, upgrades and merges, and their refusals", async () => {
    const address = freshAddress();
    const started = await documented(operations.signInAnonymously, 201, { address });
    await documented(operations.signInAnonymously, 429, { address, code: "rate_limited" });
    const anonymous = sessionEnvelope.parse(started.body).data.accessToken;
    const owner = await signedUpCaller();
    await documented(operations.upgradeAnonymous, 409, {
      token: anonymous,
      body: { name: "Taken", email: owner.email, password },
      code: "email_taken",
    });
    await documented(operations.mergeAnonymous, 409, {
      token: owner.token,
      body: { anonymousAccessToken: owner.token },
      code: "not_anonymous",
    });
    await documented(operations.mergeAnonymous, 200, {
      token: owner.token,
      body: { anonymousAccessToken: anonymous },
    });
    const another = sessionEnvelope.parse((await documented(operations.signInAnonymously, 201)).body).data;
    await documented(operations.upgradeAnonymous, 200, {
      token: another.accessToken,
      body: { name: "Signed up", email: uniqueEmail("upgraded"), password },
    });

    // Signing up with an emailed code: a taken address; a code (and the address's limit); a wrong one, the right one.
    const third = sessionEnvelope.parse((await documented(operations.signInAnonymously, 201)).body).data.accessToken;
    await documented(operations.sendUpgradeCode, 409, {
      token: third,
      body: { email: owner.email },
      code: "email_taken",
    });
    const email = uniqueEmail("by-code");
    const codeRequests = freshAddress();
    await documented(operations.sendUpgradeCode, 200, { token: third, body: { email }, address: codeRequests });
    await documented(operations.sendUpgradeCode, 429, {
      token: third,
      body: { email: uniqueEmail("by-code") },
      address: codeRequests,
      code: "rate_limited",
    });
    const code = await readMailedCode(email, { kind: "sign-in", logFile: stack.logFile });
    const byCode = { token: third, address: freshAddress() };
    await documented(operations.upgradeAnonymousWithCode, 400, {
      ...byCode,
      body: { name: "Coded", email, code: code === "00000000" ? "11111111" : "00000000" },
      code: "invalid_code",
    });
    await documented(operations.upgradeAnonymousWithCode, 429, {
      ...byCode,
      body: { name: "Coded", email, code },
      code: "rate_limited",
    });
    await documented(operations.upgradeAnonymousWithCode, 200, { token: third, body: { name: "Coded", email, code } });
    await documented(operations.upgradeAnonymousWithCode, 409, {
      token: third,
      body: { name: "Coded", email, code },
      code: "not_anonymous",
    });
  });

  it("answers 403 mfa_required where a session that has not made the second step cannot go", async () => {
    const owner = await enrolledCaller();
    const token = owner.firstStep;
    const refused = { token, code: "mfa_required" as const };
    await documented(operations.getUser, 200, { token });
    await documented(operations.signOut, 403, { ...refused, body: { scope: "global" } });
    await documented(operations.listSessions, 403, refused);
    await documented(operations.revokeSession, 403, { ...refused, query: `?id=${crypto.randomUUID()}` });
    await documented(operations.changePassword, 403, {
      ...refused,
      body: { currentPassword: password, newPassword: "a new long secret" },
    });
    await documented(operations.deleteAccount, 403, { ...refused, body: { password } });
    await documented(operations.listSecurityEvents, 403, refused);
    await documented(operations.listIdentities, 403, refused);
    await documented(operations.linkIdentity, 403, {
      ...refused,
      body: { provider: "local", redirectTo: app, password },
    });
    await documented(operations.unlinkIdentity, 403, { ...refused, query: `?id=${crypto.randomUUID()}` });
    await documented(operations.completeLink, 403, { ...refused, body: { code: "a-code-never-given" } });
    await documented(operations.mfaEnroll, 403, { ...refused, body: { password } });
    await documented(operations.mfaActivate, 403, {
      ...refused,
      body: { factorId: owner.factorId, code: codeAt(owner.secret, Date.now()) },
    });
    await documented(operations.mfaList, 403, refused);
    await documented(operations.mfaUnenroll, 403, {
      ...refused,
      body: { factorId: owner.factorId, recoveryCode: owner.recoveryCodes[0] },
    });
    await documented(operations.mfaRecoveryCodes, 403, { ...refused, body: { recoveryCode: owner.recoveryCodes[0] } });
    await documented(operations.reauthenticate, 403, { ...refused, body: { password } });
    await documented(operations.reauthenticateWithProvider, 403, {
      ...refused,
      body: { provider: "local", redirectTo: app },
    });
    await documented(operations.createNote, 403, { ...refused, body: { title: "not yet" } });
    await documented(operations.getNote, 403, { ...refused, query: `?id=${owner.noteId}` });
    await documented(operations.listNotes, 403, refused);
    await documented(operations.listChanges, 403, refused);
    await documented(operations.streamChanges, 403, refused);
    await documented(operations.saveNote, 403, { ...refused, body: { id: owner.noteId, title: "not yet" } });
    await documented(operations.deleteNote, 403, { ...refused, query: `?id=${owner.noteId}` });
    await documented(operations.createAttachment, 403, {
      ...refused,
      body: { noteId: owner.noteId, name: "a.png", type: "image/png", size: 10 },
    });
    await documented(operations.completeAttachment, 403, { ...refused, body: { id: crypto.randomUUID() } });
    await documented(operations.listAttachments, 403, { ...refused, query: `?noteId=${owner.noteId}` });
    await documented(operations.getAttachment, 403, { ...refused, query: `?id=${crypto.randomUUID()}` });
    await documented(operations.deleteAttachment, 403, { ...refused, query: `?id=${crypto.randomUUID()}` });
    await documented(operations.upgradeAnonymous, 403, {
      ...refused,
      body: { name: "Not yet", email: uniqueEmail("mfa"), password },
    });
    await documented(operations.mergeAnonymous, 403, { ...refused, body: { anonymousAccessToken: token } });
    await documented(operations.sendUpgradeCode, 403, { ...refused, body: { email: uniqueEmail("mfa") } });
    await documented(operations.upgradeAnonymousWithCode, 403, {
      ...refused,
      body: { name: "Not yet", email: uniqueEmail("mfa"), code: "12345678" },
    });
    // The second step made, the same calls answer.
    await documented(operations.listNotes, 200, { token: owner.token });
    await documented(operations.signOut, 200, { token, body: { scope: "local" } });
  });

  it("answers the admin's removal of a lost second factor", async () => {
    const owner = await enrolledCaller();
    const admin = await signedUpCaller();
    await grantAdmin(stack, admin.email);
    const userId = sessionEnvelope.parse(
      (await documented(operations.login, 200, { body: { email: owner.email, password } })).body,
    ).data.payload.id;
    await documented(operations.setUserStatus, 200, { token: admin.token, body: { id: userId, removeMfa: true } });
    const adminId = sessionEnvelope.parse(
      (await documented(operations.login, 200, { body: { email: admin.email, password } })).body,
    ).data.payload.id;
    await documented(operations.setUserStatus, 400, {
      token: admin.token,
      body: { id: adminId, removeMfa: true },
      code: "cannot_remove_own_factor",
    });
    const otherAdmin = await signedUpCaller();
    await grantAdmin(stack, otherAdmin.email);
    const otherAdminId = sessionEnvelope.parse(
      (await documented(operations.login, 200, { body: { email: otherAdmin.email, password } })).body,
    ).data.payload.id;
    await documented(operations.setUserStatus, 400, {
      token: admin.token,
      body: { id: otherAdminId, removeMfa: true },
      code: "cannot_remove_admin_factor",
    });
    await documented(operations.setUserStatus, 404, {
      token: admin.token,
      body: { id: userId, removeMfa: true },
      code: "factor_not_found",
    });
  });

  it("answers a provider sign-in's own outcomes: the redirects, the code's exchange, and identities", async () => {
    // Start and return: 302s with a Location and no body; refusals are JSON with no Location.
    const person = newPerson();
    const back = await providerSignIn(person.sub);
    expect(back.origin + back.pathname).toBe(app);
    const code = back.searchParams.get("code") ?? fail(`no code in ${back.href}`);
    await documented(operations.oauthAuthorize, 400, {
      apiKey: null,
      query: `?${new URLSearchParams({ provider: "nobody", redirect_to: app })}`,
      code: "invalid_request",
    });
    await documented(operations.oauthAuthorize, 400, {
      apiKey: null,
      query: `?${new URLSearchParams({ provider: "local", redirect_to: "https://attacker.example/signed-in" })}`,
      code: "invalid_request",
    });
    // LOGIN_MAX_ATTEMPTS_PER_ADDRESS is 1 here: a second start from one address is over the limit.
    const starts = freshAddress();
    await documented(operations.oauthAuthorize, 302, { apiKey: null, query: authorizeQuery, address: starts });
    const limited = await documented(operations.oauthAuthorize, 429, {
      apiKey: null,
      query: authorizeQuery,
      address: starts,
      code: "rate_limited",
    });
    expect(limited.headers.get("retry-after")).toMatch(/^\d+$/);
    await documented(operations.oauthCallback, 400, { apiKey: null, code: "invalid_state" });
    await documented(operations.oauthCallback, 400, {
      apiKey: null,
      at: callbackPath,
      query: "?state=a-state-never-given&code=x",
      code: "invalid_state",
    });
    // A link's browser step: a flow never started (or already opened) is refused, as JSON with no Location.
    await documented(operations.linkIdentityAuthorize, 400, {
      apiKey: null,
      query: `?flow=${"a".repeat(43)}`,
      code: "invalid_state",
    });

    // The one-time code: exchanged once, then refused.
    const exchanged = await documented(operations.oauthToken, 200, { body: { code, codeVerifier: pkce.verifier } });
    const { accessToken } = sessionEnvelope.parse(exchanged.body).data;
    await documented(operations.oauthToken, 400, { body: { code, codeVerifier: pkce.verifier }, code: "invalid_code" });
    await documented(operations.oauthToken, 400, { body: { code: "" }, code: "invalid_request" });
    // Started with the app's PKCE challenge, a code is exchanged only with its verifier.
    const verifier = randomBytes(32).toString("base64url");
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    const bound = (await providerSignIn(person.sub, challenge)).searchParams.get("code") ?? fail("no code");
    await documented(operations.oauthToken, 400, {
      body: { code: bound, codeVerifier: randomBytes(32).toString("base64url") },
      code: "invalid_code",
    });
    const rebound = (await providerSignIn(person.sub, challenge)).searchParams.get("code") ?? fail("no code");
    await documented(operations.oauthToken, 200, { body: { code: rebound, codeVerifier: verifier } });

    // The account the provider made: its one identity is its only way to sign in.
    const listed = await documented(operations.listIdentities, 200, { token: accessToken });
    const made = identityList.parse((listed.body as { data: unknown }).data);
    expect(made.hasPassword).toBe(false);
    // A proof at the provider: a 200 with the provider's URL; nothing to prove with at a provider not linked, or one
    // not configured.
    const proofs = freshAddress();
    await documented(operations.reauthenticateWithProvider, 200, {
      token: accessToken,
      body: { provider: "local", redirectTo: app },
      address: proofs,
    });
    await documented(operations.reauthenticateWithProvider, 429, {
      token: accessToken,
      body: { provider: "local", redirectTo: app },
      address: proofs,
      code: "rate_limited",
    });
    await documented(operations.reauthenticateWithProvider, 400, {
      token: accessToken,
      body: { provider: "nobody", redirectTo: app },
      code: "invalid_request",
    });
    const passwordOnly = await signedUpCaller();
    await documented(operations.reauthenticateWithProvider, 404, {
      token: passwordOnly.token,
      body: { provider: "local", redirectTo: app },
      code: "identity_not_found",
    });
    // Unlinking needs a proof given for it within 5 minutes; a sign-in's age is none.
    await documented(operations.unlinkIdentity, 403, {
      token: accessToken,
      query: `?id=${made.identities[0].id}`,
      code: "reauthentication_required",
    });
    const sessionOf = (token: string) => JSON.parse(atob(token.replace(/^Bearer /, "").split(".")[1])).session_id;
    await stack.sql`update app.sessions set reauthenticated_at = now(), reauthenticated_with = 'provider'
                    where id = ${sessionOf(accessToken)}`;
    await documented(operations.unlinkIdentity, 409, {
      token: accessToken,
      query: `?id=${made.identities[0].id}`,
      code: "last_sign_in_method",
    });
    await documented(operations.unlinkIdentity, 404, {
      token: accessToken,
      query: `?id=${crypto.randomUUID()}`,
      code: "identity_not_found",
    });
    await documented(operations.unlinkIdentity, 400, { token: accessToken, query: "?id=not-an-id" });

    // A password account links the provider (with the password), then unlinks it (with a proof given for it).
    const owner = await signedUpCaller();
    await documented(operations.linkIdentity, 400, {
      token: owner.token,
      body: { provider: "nobody", redirectTo: app },
      code: "invalid_request",
    });
    // Two accounts start linking one provider identity: the first to complete links it, the second meets a 409.
    const linker = newPerson();
    const rival = await signedUpCaller();
    const ownerCode = await linkCode(owner.token, linker.sub);
    const rivalCode = await linkCode(rival.token, linker.sub);
    await documented(operations.completeLink, 400, {
      token: owner.token,
      body: { code: "a-code-never-given" },
      code: "invalid_code",
    });
    await documented(operations.completeLink, 200, { token: owner.token, body: { code: ownerCode } });
    await documented(operations.completeLink, 400, {
      token: owner.token,
      body: { code: ownerCode },
      code: "invalid_code",
    });
    await documented(operations.completeLink, 409, {
      token: rival.token,
      body: { code: rivalCode },
      code: "identity_already_linked",
    });
    const ownerIdentities = identityList.parse(
      ((await documented(operations.listIdentities, 200, { token: owner.token })).body as { data: unknown }).data,
    );
    expect(ownerIdentities.hasPassword).toBe(true);
    await documented(operations.reauthenticate, 200, { token: owner.token, body: { password } });
    await documented(operations.unlinkIdentity, 200, {
      token: owner.token,
      query: `?id=${ownerIdentities.identities[0].id}`,
    });

    // Without a proof given for it, a link needs the password; its re-entries are limited (5 a window).
    const stale = await signedUpCaller();
    const link = { provider: "local", redirectTo: app };
    const asked = await documented(operations.linkIdentity, 400, {
      token: stale.token,
      body: link,
      code: "invalid_request",
    });
    expect(asked.body).toMatchObject({ fields: [{ field: "password", message: "password is required" }] });
    for (let guess = 0; guess < 5; guess++) {
      await documented(operations.linkIdentity, 401, {
        token: stale.token,
        body: { ...link, password: `guess ${guess}` },
        code: "invalid_credentials",
      });
    }
    await documented(operations.linkIdentity, 429, {
      token: stale.token,
      body: { ...link, password },
      code: "rate_limited",
    });

    // Change-password and delete-account without the password: only after a proof given for it.
    await documented(operations.changePassword, 400, {
      token: stale.token,
      body: { newPassword: "a new long secret" },
      code: "invalid_request",
    });
    const proven = await signedUpCaller();
    await documented(operations.reauthenticate, 200, { token: proven.token, body: { password } });
    await documented(operations.changePassword, 200, {
      token: proven.token,
      body: { newPassword: "a new long secret" },
    });
  });

  it("answers account deletion's own outcomes", async () => {
    const { email, token } = await signedUpCaller();
    // Only a proof given with POST /auth/reauthenticate stands in for the password; a fresh sign-in does not.
    await documented(operations.deleteAccount, 400, { token, body: {} });
    await documented(operations.deleteAccount, 401, { token, body: { password: "wrong password" } });
    await documented(operations.deleteAccount, 200, { token, body: { password } });
    // A session's re-entered passwords are limited (5 a window): the sixth is refused, even the right one.
    const again = await signedUpCaller();
    for (let guess = 0; guess < 5; guess++) {
      await documented(operations.deleteAccount, 401, { token: again.token, body: { password: `guess ${guess}` } });
    }
    await documented(operations.deleteAccount, 429, { token: again.token, body: { password } });
    expect(email).not.toBe(again.email);
  });

  it("answers 403 to a suspended account on login, create-password, verify-email and a sign-in code", async () => {
    const { email } = await signedUpCaller();
    const verification = await readMailedCode(email, { kind: "verification", logFile: stack.logFile });
    await documented(operations.requestPasswordReset, 200, { body: { email } });
    const code = await readResetCode(email, 0, stack.logFile);
    await documented(operations.sendSignInCode, 200, { body: { email } });
    const signInCode = await readMailedCode(email, { kind: "sign-in", logFile: stack.logFile });
    await stack.sql`update app.users set status = 'SUSPENDED' where email = ${email}`;
    await documented(operations.login, 403, { body: { email, password }, code: "account_suspended" });
    await documented(operations.createPassword, 403, {
      body: { email, password: "a new secret", code },
      code: "account_suspended",
    });
    await documented(operations.verifyEmail, 403, {
      body: { email, code: verification, password },
      code: "account_suspended",
    });
    await documented(operations.signInWithCode, 403, { body: { email, code: signInCode }, code: "account_suspended" });
  });

  it("answers 503 from every operation while the database cannot be reached", { timeout: 60_000 }, async () => {
    const caller = await signedUpCaller();
    // The second step and the factor's own operations read the factor from the token: an enrolled account's.
    const owner = await enrolledCaller();
    const passkeyOwner = await passkeyCaller();
    const tokens: Record<string, string> = {
      mfaVerify: owner.firstStep,
      mfaRecover: owner.firstStep,
      mfaUnenroll: owner.token,
      mfaRecoveryCodes: owner.token,
    };
    const proxy = stack.proxy;
    if (!proxy) throw new Error("the stack was started without its proxy");
    proxy.cut();
    try {
      const bodies: Record<string, unknown> = {
        register: { name: "Down", email: uniqueEmail(), password },
        login: { email: caller.email, password },
        requestPasswordReset: { email: caller.email },
        createPassword: { email: caller.email, password: "a new secret", code: "123456" },
        sendSignInCode: { email: caller.email },
        signInWithCode: { email: caller.email, code: "12345678" },
        refreshSession: { refreshToken: caller.refreshToken },
        verifyEmail: { email: caller.email, code: "123456", password },
        resendVerification: { email: caller.email },
        changePassword: { currentPassword: password, newPassword: "a new secret" },
        deleteAccount: { password },
        signOut: {},
        setUserStatus: { id: crypto.randomUUID(), status: "SUSPENDED" },
        createNote: { title: "down" },
        saveNote: { id: caller.noteId, title: "down" },
        mfaEnroll: { password },
        mfaActivate: { factorId: crypto.randomUUID(), code: "123456" },
        mfaVerify: { code: "123456" },
        mfaRecover: { recoveryCode: owner.recoveryCodes[0] },
        mfaUnenroll: { factorId: owner.factorId, code: "123456" },
        mfaRecoveryCodes: { code: "123456" },
        reauthenticate: { password },
        oauthToken: { code: "a-code-never-given", codeVerifier: pkce.verifier },
        linkIdentity: { provider: "local", redirectTo: app },
        reauthenticateWithProvider: { provider: "local", redirectTo: app },
        completeLink: { code: "a-code-never-given" },
        passkeysRegisterOptions: {},
        // Verified without the database (its challenge is checked by the statement that stores it): 503 there.
        passkeysRegister: { response: new SoftAuthenticator().create(madeUpCreationOptions) },
        passkeysLoginOptions: {},
        passkeysLogin: { response: passkeyOwner.authenticator.get({ challenge: "a-challenge-never-given" }) },
        passkeysRename: { name: "down" },
        upgradeAnonymous: { name: "Down", email: uniqueEmail("down"), password },
        sendUpgradeCode: { email: uniqueEmail("down") },
        upgradeAnonymousWithCode: { name: "Down", email: uniqueEmail("down"), code: "12345678" },
        // The caller's own token verifies without the database; the statement that would refuse it cannot run.
        mergeAnonymous: { anonymousAccessToken: caller.token },
        createAttachment: { noteId: caller.noteId, name: "down.png", type: "image/png", size: 10 },
        // The store answers (nothing is there); the statement that would say so cannot run.
        completeAttachment: { id: crypto.randomUUID() },
      };
      const queries: Record<string, string> = {
        oauthAuthorize: authorizeQuery,
        oauthCallback: "?state=a-state-never-given&code=x",
        linkIdentityAuthorize: `?flow=${"a".repeat(43)}`,
        unlinkIdentity: `?id=${crypto.randomUUID()}`,
        deleteNote: `?id=${caller.noteId}`,
        getNote: `?id=${caller.noteId}`,
        revokeSession: `?id=${caller.refreshToken.split(".")[0]}`,
        listAccountEvents: `?id=${crypto.randomUUID()}`,
        passkeysRename: `?id=${crypto.randomUUID()}`,
        passkeysRemove: `?id=${crypto.randomUUID()}`,
        listAttachments: `?noteId=${caller.noteId}`,
        getAttachment: `?id=${crypto.randomUUID()}`,
        deleteAttachment: `?id=${crypto.randomUUID()}`,
      };
      await Promise.all(
        Object.entries(operations).map(([name, spec]) =>
          documented(spec, 503, {
            ...credentials(spec, caller),
            ...(tokens[name] ? { token: tokens[name] } : {}),
            body: bodies[name],
            query: queries[name],
            code: "service_unavailable",
          })
        ),
      );
    } finally {
      proxy.restore();
    }
  });

  it("answers the passkey operations' own outcomes", async () => {
    const owner = await passkeyCaller();
    const { token, authenticator } = owner;
    // Registering: without a proof, with one, past the cap (10, the last planted in SQL after the options).
    const bare = await signedUpCaller();
    await documented(operations.passkeysRegisterOptions, 403, {
      token: bare.token,
      body: {},
      code: "reauthentication_required",
    });
    await documented(operations.passkeysRegister, 403, {
      token: bare.token,
      body: { response: new SoftAuthenticator().create(madeUpCreationOptions) },
      code: "reauthentication_required",
    });
    await documented(operations.reauthenticate, 200, { token, body: { password } });
    const registering = freshAddress();
    await documented(operations.passkeysRegisterOptions, 200, { token, body: {}, address: registering });
    await documented(operations.passkeysRegisterOptions, 429, {
      token,
      body: {},
      address: registering,
      code: "rate_limited",
    });
    const options = await passkeyOptionsOf(operations.passkeysRegisterOptions, token);
    await plantPasskeys(owner.userId, 9);
    await documented(operations.passkeysRegister, 409, {
      token,
      body: { response: authenticator.create(options) },
      code: "passkey_limit_reached",
    });
    await documented(operations.passkeysRegisterOptions, 409, { token, body: {}, code: "passkey_limit_reached" });
    const ceremonies = freshAddress();
    await documented(operations.passkeysLoginOptions, 200, { body: {}, address: ceremonies });
    await documented(operations.passkeysLoginOptions, 429, { body: {}, address: ceremonies, code: "rate_limited" });
    // Signing in: a refused assertion, and a suspended account's.
    await documented(operations.passkeysLogin, 401, {
      body: { response: authenticator.get({ challenge: "a-challenge-never-given" }) },
      code: "passkey_rejected",
    });
    await stack.sql`update app.users set status = 'SUSPENDED' where id = ${owner.userId}`;
    await documented(operations.passkeysLogin, 403, {
      body: { response: authenticator.get(await passkeyOptionsOf(operations.passkeysLoginOptions)) },
      code: "account_suspended",
    });
    await stack.sql`update app.users set status = 'ACTIVE' where id = ${owner.userId}`;
    // Before the second step, the account's passkeys are out of reach.
    const enrolled = await enrolledCaller();
    const id = crypto.randomUUID();
    await documented(operations.passkeysList, 403, { token: enrolled.firstStep, code: "mfa_required" });
    await documented(operations.passkeysRename, 403, {
      token: enrolled.firstStep,
      query: `?id=${id}`,
      body: { name: "x" },
      code: "mfa_required",
    });
    // Managing: another account's id, a removal without a proof, the last way in of an account without a password.
    const signedIn = sessionEnvelope.parse(
      (await documented(operations.passkeysLogin, 200, {
        body: { response: authenticator.get(await passkeyOptionsOf(operations.passkeysLoginOptions)) },
      })).body,
    ).data.accessToken;
    await documented(operations.passkeysList, 200, { token: signedIn });
    await documented(operations.passkeysRename, 404, {
      token: signedIn,
      query: `?id=${id}`,
      body: { name: "x" },
      code: "passkey_not_found",
    });
    await documented(operations.passkeysRename, 200, {
      token: signedIn,
      query: `?id=${owner.passkeyId}`,
      body: { name: "Renamed" },
    });
    await documented(operations.passkeysRemove, 403, {
      token: signedIn,
      query: `?id=${owner.passkeyId}`,
      code: "reauthentication_required",
    });
    await documented(operations.reauthenticate, 200, {
      token: signedIn,
      body: { passkey: authenticator.get(await passkeyOptionsOf(operations.passkeysLoginOptions, signedIn)) },
    });
    await documented(operations.passkeysRemove, 404, {
      token: signedIn,
      query: `?id=${id}`,
      code: "passkey_not_found",
    });
    await documented(operations.passkeysRemove, 200, { token: signedIn, query: `?id=${owner.passkeyId}` });
    const lone = await passkeyCaller();
    await stack.sql`update app.users set password_hash = null where id = ${lone.userId}`;
    const loneSession = sessionEnvelope.parse(
      (await documented(operations.passkeysLogin, 200, {
        body: { response: lone.authenticator.get(await passkeyOptionsOf(operations.passkeysLoginOptions)) },
      })).body,
    ).data.accessToken;
    await documented(operations.reauthenticate, 200, {
      token: loneSession,
      body: { passkey: lone.authenticator.get(await passkeyOptionsOf(operations.passkeysLoginOptions, loneSession)) },
    });
    await documented(operations.passkeysRemove, 409, {
      token: loneSession,
      query: `?id=${lone.passkeyId}`,
      code: "last_sign_in_method",
    });
  });

  it("answers the attachments' own outcomes", async () => {
    const caller = await signedUpCaller();
    const { token, noteId } = caller;
    const reserve = (body: Record<string, unknown>, status: number, code?: ErrorCode) =>
      documented(operations.createAttachment, status, {
        token,
        body: { noteId, name: "a.png", type: "image/png", ...body },
        code,
      });
    // Reserves, puts `bytes` (declared as `size`) to the store, and answers the attachment's id.
    const uploaded = async (bytes: Uint8Array<ArrayBuffer>, size = bytes.length, type = "image/png") => {
      const reserved = await reserve({ size, type }, 201);
      const { attachment, upload } = notesSuccessEnvelope(attachmentUpload).parse(reserved.body).data;
      const put = await fetch(upload.url, { method: "PUT", headers: upload.headers, body: bytes });
      await put.body?.cancel();
      return attachment.id;
    };
    const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);
    const ready = await uploaded(png);
    await documented(operations.completeAttachment, 200, { token, body: { id: ready } });
    await documented(operations.listAttachments, 200, { token, query: `?noteId=${noteId}` });
    await documented(operations.getAttachment, 200, { token, query: `?id=${ready}` });
    await documented(operations.deleteAttachment, 200, { token, query: `?id=${ready}` });
    for (const spec of [operations.getAttachment, operations.deleteAttachment]) {
      await documented(spec, 404, { token, query: `?id=${ready}`, code: "attachment_not_found" });
    }
    await documented(operations.completeAttachment, 404, { token, body: { id: ready }, code: "attachment_not_found" });
    await documented(operations.listAttachments, 404, {
      token,
      query: `?noteId=${crypto.randomUUID()}`,
      code: "note_not_found",
    });
    await reserve({ noteId: crypto.randomUUID(), size: 1 }, 404, "note_not_found");
    await reserve({ size: 10 * 1_048_576 + 1 }, 413, "attachment_too_large");
    await documented(operations.completeAttachment, 413, {
      token,
      body: { id: await uploaded(png, png.length - 4) },
      code: "attachment_too_large",
    });
    await documented(operations.completeAttachment, 400, {
      token,
      body: { id: await uploaded(png, png.length + 4) },
      code: "invalid_request",
    });
    await documented(operations.completeAttachment, 415, {
      token,
      body: { id: await uploaded(new Uint8Array(new TextEncoder().encode("MZ not an image"))) },
      code: "attachment_type_mismatch",
    });
    const waiting =
      notesSuccessEnvelope(attachmentUpload).parse((await reserve({ size: 5 }, 201)).body).data.attachment;
    await documented(operations.completeAttachment, 409, {
      token,
      body: { id: waiting.id },
      code: "attachment_not_uploaded",
    });
    for (let index = 0; index < 19; index++) await reserve({ size: 1, type: "text/plain" }, 201);
    await reserve({ size: 1 }, 409, "attachment_limit_reached");
    const anonymous = await documented(operations.signInAnonymously, 201);
    const visitor = sessionEnvelope.parse(anonymous.body).data.accessToken;
    const visitorsNote = await documented(operations.createNote, 201, { token: visitor, body: { title: "mine" } });
    await documented(operations.createAttachment, 403, {
      token: visitor,
      body: { noteId: noteEnvelope.parse(visitorsNote.body).data.id, name: "a.png", type: "image/png", size: 1 },
      code: "sign_up_required",
    });
  });

  it("answers a path of no operation with a code too: an unknown auth path, the mail drain without its secret", async () => {
    // Whatever its query: a path of no endpoint has no parameters to refuse.
    const unknown = await stack.call("/auth/no-such-endpoint?bogus=1", { body: {} });
    expect(unknown.status, unknown.text).toBe(404);
    expectErrorCode(unknown, "endpoint_not_found");
    const dispatch = await stack.call("/mail-dispatch", { body: {} });
    expect(dispatch.status, dispatch.text).toBe(401);
    expectErrorCode(dispatch, "invalid_dispatch_secret");
  });

  afterAll(() => {
    for (const [path, methods] of Object.entries(openApiDocument.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const seen = observed.get(`${method.toUpperCase()} ${path}`) ?? new Set();
        const missing = Object.keys(operation.responses).map(Number).filter((status) =>
          status !== 500 && !seen.has(status)
        );
        expect(missing, `${method.toUpperCase()} ${path}: documented statuses never answered`).toEqual([]);
      }
    }
  });
});
