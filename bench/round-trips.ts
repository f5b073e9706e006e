/**
 * Round trips to Postgres per endpoint, measured rather than reasoned: the
 * stack reaches its database through a TCP proxy, and each endpoint's median
 * latency over sequential requests is taken with the proxy passing traffic at
 * once and again with it holding every chunk `rttMs / 2` in each direction.
 * The difference divided by the round-trip time is the number of round trips.
 *
 * @example
 * ```ts
 * const report = await measureRoundTrips(stack.baseUrl, proxy, { rttMs: 40, samples: 15, heavy });
 * ```
 */
import type { TcpProxy } from "../dev/harness/tcp-proxy.ts";
import { codeAt, totpPolicy } from "../supabase/functions/_shared/auth/totp.ts";
import { markdownTable } from "./report.ts";
import { type Call, send } from "./requests.ts";
import { median } from "./load.ts";
import { searchWord } from "./seed.ts";
import { type IdentityProvider, ProviderBrowser } from "../dev/harness/identity-provider.ts";
import { createHash, randomBytes } from "node:crypto";
import { passkeyCalls, passkeyTwoTransactions } from "./round-trips-passkeys.ts";
import { anonymousCalls } from "./round-trips-anonymous.ts";
import { attachmentCalls } from "./round-trips-attachments.ts";

/** One endpoint's latencies and the round trips they imply. */
export interface RoundTripRow {
  endpoint: string;
  directMs: number;
  delayedMs: number;
  roundTrips: number;
}

/** Median latency of `samples` sequential calls after two untimed ones; `next` builds each call. */
async function medianLatency(baseUrl: string, next: () => Call, samples: number): Promise<number> {
  for (let warmup = 0; warmup < 2; warmup++) await send(baseUrl, next());
  const times: number[] = [];
  for (let sample = 0; sample < samples; sample++) times.push((await send(baseUrl, next())).ms);
  return median(times);
}

/** The endpoints' calls for one signed-up user, each call fresh where the endpoint consumes something. */
export async function endpointCalls(baseUrl: string, apiKey: string) {
  const password = "round trips password";
  const apikey = { apikey: apiKey };
  let counter = 0;
  const unique = () => `rt-${Date.now()}-${counter++}@example.com`;
  const email = unique();
  const registered = await send(baseUrl, {
    path: "/auth/register",
    method: "POST",
    headers: apikey,
    body: { name: "Round Trips", email, password },
    status: 201,
  });
  const authorization = { authorization: String(registered.body.data?.accessToken) };
  // Every note holds the benchmark's search word, so a 10-note user's search matches all 10.
  const createCall = (): Call => ({
    path: "/notes-create",
    method: "POST",
    headers: authorization,
    body: { title: "Round trip", content: `Holds ${searchWord}` },
    status: 201,
  });
  const createNote = async () => String((await send(baseUrl, createCall())).body.data?.id);
  const loginCall: Call = {
    path: "/auth/login",
    method: "POST",
    headers: apikey,
    body: { email, password },
    status: 200,
  };
  /** A session of its own, for calls that use one up (a refresh token rotates, a logout ends it). */
  const freshSession = async () => (await send(baseUrl, loginCall)).body.data ?? {};
  const createNoteWithVersion = async () => {
    const { data } = (await send(baseUrl, createCall())).body;
    return { id: String(data?.id), updatedAt: String(data?.updatedAt) };
  };
  const saved = await createNote();
  const calls: Record<string, () => Call | Promise<Call>> = {
    // The password as a proof: its attempt is counted against the session's re-entry limit and committed before the
    // hash is checked, then one statement records it. Two transactions, as a login; a new session each time, so the
    // session's limit never refuses.
    "auth/reauthenticate with the password": async () => ({
      path: "/auth/reauthenticate",
      method: "POST",
      headers: { ...apikey, authorization: String((await freshSession()).accessToken) },
      body: { password },
      status: 200,
    }),
    "notes-create": createCall,
    "notes-fetch": () => ({ path: "/notes-fetch?limit=10", method: "GET", headers: authorization, status: 200 }),
    "notes-save": () => ({
      path: "/notes-save",
      method: "POST",
      headers: authorization,
      body: { id: saved, title: `Saved ${counter++}` },
      status: 200,
    }),
    "notes-create with Idempotency-Key": () => ({
      ...createCall(),
      headers: { ...authorization, "idempotency-key": `round-trips-${Date.now()}-${counter++}` },
    }),
    "notes-fetch status=DRAFT": () => ({
      path: "/notes-fetch?limit=10&status=DRAFT",
      method: "GET",
      headers: authorization,
      status: 200,
    }),
    "notes-fetch q": () => ({
      path: `/notes-fetch?limit=10&q=${searchWord}`,
      method: "GET",
      headers: authorization,
      status: 200,
    }),
    "notes-changes": () => ({ path: "/notes-changes?limit=10", method: "GET", headers: authorization, status: 200 }),
    "notes-get": () => ({ path: `/notes-get?id=${saved}`, method: "GET", headers: authorization, status: 200 }),
    // A fresh note each time, so the version named is always the current one.
    "notes-save with expectedUpdatedAt": async () => {
      const note = await createNoteWithVersion();
      return {
        path: "/notes-save",
        method: "POST",
        headers: authorization,
        body: { id: note.id, title: `Saved ${counter++}`, expectedUpdatedAt: note.updatedAt },
        status: 200,
      };
    },
    "notes-delete": async () => ({
      path: `/notes-delete?id=${await createNote()}`,
      method: "DELETE",
      headers: authorization,
      status: 200,
    }),
    "auth/register": () => ({
      path: "/auth/register",
      method: "POST",
      headers: apikey,
      body: { name: "Round Trips", email: unique(), password },
      status: 201,
    }),
    "auth/login": () => loginCall,
    "auth/refresh": async () => ({
      path: "/auth/refresh",
      method: "POST",
      headers: apikey,
      body: { refreshToken: (await freshSession()).refreshToken },
      status: 200,
    }),
    "auth/logout": async () => ({
      path: "/auth/logout",
      method: "POST",
      headers: { ...apikey, authorization: String((await freshSession()).accessToken) },
      body: {},
      status: 200,
    }),
    "auth/sessions": () => ({
      path: "/auth/sessions",
      method: "GET",
      headers: { ...apikey, ...authorization },
      status: 200,
    }),
    "auth/user": () => ({ path: "/auth/user", method: "GET", headers: { ...apikey, ...authorization }, status: 200 }),
    "auth/events": () => ({
      path: "/auth/events",
      method: "GET",
      headers: { ...apikey, ...authorization },
      status: 200,
    }),
    "auth/request-password-reset": () => ({
      path: "/auth/request-password-reset",
      method: "POST",
      headers: apikey,
      body: { email },
      status: 200,
    }),
    // A wrong code runs the same statement as a right one (app.verify_email), and can be repeated: with the
    // account's token it is one round trip; with its password two, as a login (the attempt commits first).
    "auth/verify-email": () => ({
      path: "/auth/verify-email",
      method: "POST",
      headers: { ...apikey, ...authorization },
      body: { email, code: "000000" },
      status: 400,
    }),
    "auth/verify-email with password": () => ({
      path: "/auth/verify-email",
      method: "POST",
      headers: apikey,
      body: { email, code: "000000", password },
      status: 400,
    }),
    // A wrong code runs the same single statement as a right one (app.reset_password), and can be repeated.
    "auth/create-password": () => ({
      path: "/auth/create-password",
      method: "POST",
      headers: apikey,
      body: { email, password, code: "000000" },
      status: 400,
    }),
    // The same single insert for any email; the drain mails the code later.
    "auth/otp": () => ({ path: "/auth/otp", method: "POST", headers: apikey, body: { email }, status: 200 }),
    // A wrong code runs the same single statement as a right one (app.sign_in_with_code and the session's start);
    // each for an email of its own, as ten wrong codes an hour stop an email.
    "auth/otp/verify": () => ({
      path: "/auth/otp/verify",
      method: "POST",
      headers: apikey,
      body: { email: unique(), code: "00000000" },
      status: 400,
    }),
  };
  return { calls, authorization, createCall, email };
}

/**
 * The admin endpoints' calls, made by `authorization`'s account once
 * `grantAdmin` has made it an admin, as the operator's command does.
 */
async function adminCalls(baseUrl: string, apiKey: string, authorization: { authorization: string }) {
  const apikey = { apikey: apiKey };
  // Another account, for the admin to suspend and reactivate by turns.
  const managed = await send(baseUrl, {
    path: "/auth/register",
    method: "POST",
    headers: apikey,
    body: { name: "Managed", email: `rt-managed-${Date.now()}@example.com`, password: "round trips password" },
    status: 201,
  });
  const managedId = String((managed.body.data?.payload as { id?: unknown } | undefined)?.id);
  let suspended = false;
  const calls: Record<string, () => Call> = {
    "admin-users": () => ({
      path: "/admin-users?limit=10",
      method: "GET",
      headers: { ...apikey, ...authorization },
      status: 200,
    }),
    "admin-users POST": () => {
      suspended = !suspended;
      return {
        path: "/admin-users",
        method: "POST",
        headers: { ...apikey, ...authorization },
        body: { id: managedId, status: suspended ? "SUSPENDED" : "ACTIVE" },
        status: 200,
      };
    },
    "admin-users/events": () => ({
      path: `/admin-users/events?id=${managedId}`,
      method: "GET",
      headers: { ...apikey, ...authorization },
      status: 200,
    }),
  };
  return calls;
}

/**
 * The second factor's calls, for an account that activates one: the second
 * step of a sign-in, and notes calls of the aal2 session it answers. Each
 * verify is a fresh sign-in's aal1 session sending the code of the step the
 * factor accepted last: a replay, refused (400) by the same single statement
 * that accepts a fresh code (app.pass_second_step) and, unlike a wrong code,
 * never counted toward the lockout, so it can be repeated.
 */
async function secondFactorCalls(
  baseUrl: string,
  apiKey: string,
  verifyAddress: (email: string) => Promise<void>,
) {
  const apikey = { apikey: apiKey };
  const password = "round trips password";
  const email = `rt-mfa-${Date.now()}@example.com`;
  const registered = await send(baseUrl, {
    path: "/auth/register",
    method: "POST",
    headers: apikey,
    body: { name: "Second Factor", email, password },
    status: 201,
  });
  const registeredAuthorization = { authorization: String(registered.body.data?.accessToken) };
  await verifyAddress(email);
  const enrolled = await send(baseUrl, {
    path: "/auth/mfa/enroll",
    method: "POST",
    headers: { ...apikey, ...registeredAuthorization },
    body: { password },
    status: 201,
  });
  const secret = String(enrolled.body.data?.secret);
  const period = totpPolicy.periodSeconds * 1000;
  /** A code of a step that has just begun, so it stays within the accepted window for the next 30 s at least. */
  const freshCode = async () => {
    await new Promise((resolve) => setTimeout(resolve, period - (Date.now() % period) + 100));
    return codeAt(secret, Date.now());
  };
  const activated = await send(baseUrl, {
    path: "/auth/mfa/activate",
    method: "POST",
    headers: { ...apikey, ...registeredAuthorization },
    body: { factorId: enrolled.body.data?.factorId, code: await freshCode() },
    status: 200,
  });
  const authorization = { authorization: String(activated.body.data?.accessToken) };
  const firstStep = async () =>
    String(
      (await send(baseUrl, {
        path: "/auth/login",
        method: "POST",
        headers: apikey,
        body: { email, password },
        status: 200,
      }))
        .body.data?.accessToken,
    );
  // The code of the step accepted last, and when; a new step is accepted once it is 20 s old.
  let accepted = { code: "", at: 0 };
  const acceptedCode = async () => {
    if (Date.now() - accepted.at > 20_000) {
      const code = await freshCode();
      await send(baseUrl, {
        path: "/auth/mfa/verify",
        method: "POST",
        headers: { ...apikey, authorization: await firstStep() },
        body: { code },
        status: 200,
      });
      accepted = { code, at: Date.now() };
    }
    return accepted.code;
  };
  const calls: Record<string, () => Promise<Call> | Call> = {
    "auth/mfa/verify": async () => ({
      path: "/auth/mfa/verify",
      method: "POST",
      headers: { ...apikey, authorization: await firstStep() },
      body: { code: await acceptedCode() },
      status: 400,
    }),
    // The same replay, as a proof for a change of how the account signs in: refused by the one statement that
    // records an accepted one (app.reauthenticate_with_factor), and never counted, so it can be repeated.
    "auth/reauthenticate": async () => ({
      path: "/auth/reauthenticate",
      method: "POST",
      headers: { ...apikey, ...authorization },
      body: { code: await acceptedCode() },
      status: 400,
    }),
    "notes-fetch at aal2": () => ({
      path: "/notes-fetch?limit=10",
      method: "GET",
      headers: authorization,
      status: 200,
    }),
    "notes-create at aal2": () => ({
      path: "/notes-create",
      method: "POST",
      headers: authorization,
      body: { title: "Round trip at aal2" },
      status: 201,
    }),
  };
  return calls;
}

/**
 * The provider sign-in's calls, against the stack's provider `local` (a real one, driven as a browser would): the
 * start, the callback of a returning person (the flow, the provider's code exchange, the sign-in), the one-time
 * code's exchange, the identities' list, an unlink that finds nothing, a link's start and its completion.
 */
async function providerCalls(baseUrl: string, apiKey: string, provider: BenchProvider) {
  const apikey = { apikey: apiKey };
  const person = { sub: `rt-person-${Date.now()}`, email: `rt-provider-${Date.now()}@example.com` };
  provider.identityProvider.setAccount({ ...person, email_verified: true, name: "Round Trips" });
  const browser = new ProviderBrowser();
  // The app's PKCE pair (RFC 7636), which every start and exchange carries.
  const verifier = randomBytes(32).toString("base64url");
  const start = `/auth/oauth/authorize?${new URLSearchParams({
    provider: "local",
    redirect_to: provider.appUrl,
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
  })}`;
  /** The callback's path at the stack, after the person signed in at the provider, and its browser's cookie. */
  const callbackOf = async () => {
    const callback = await browser.signIn(`${baseUrl}${start}`, person.sub);
    return { path: callback.href.slice(baseUrl.length), headers: { cookie: browser.cookieFor(callback) } };
  };
  const oneTimeCode = async () => {
    const { path } = await callbackOf();
    const back = await browser.visit(`${baseUrl}${path}`);
    return new URL(back.headers.get("location") ?? "").searchParams.get("code");
  };
  const signIn = async () => {
    const { body } = await send(baseUrl, {
      path: "/auth/oauth/token",
      method: "POST",
      headers: apikey,
      body: { code: await oneTimeCode(), codeVerifier: verifier },
      status: 200,
    });
    return { ...apikey, authorization: String(body.data?.accessToken) };
  };
  const signedIn = await signIn();
  /**
   * The session's proof at its provider (`POST /auth/reauthenticate/provider`, a new sign-in there), which unlinking
   * and linking without a password need; renewed before its 5 minutes are up.
   */
  let provedAt = 0;
  const proveAtProvider = async () => {
    const { body } = await send(baseUrl, {
      path: "/auth/reauthenticate/provider",
      method: "POST",
      headers: signedIn,
      body: { provider: "local", redirectTo: provider.appUrl },
      status: 200,
    });
    const proving = new ProviderBrowser();
    const back = await proving.visit(await proving.signIn(String(body.data?.url), person.sub));
    const location = new URL(back.headers.get("location") ?? "");
    if (location.searchParams.get("reauthenticated") !== "local") throw new Error(`no proof: ${location.href}`);
  };
  const proved = async () => {
    if (Date.now() - provedAt < 4 * 60_000) return;
    await proveAtProvider();
    provedAt = Date.now();
  };
  /** The URL of a link this session starts (its browser step, at this service), the session's proof renewed first. */
  const linkStartUrl = async () => {
    await proved();
    const { body } = await send(baseUrl, {
      path: "/auth/identities/link",
      method: "POST",
      headers: signedIn,
      body: { provider: "local", redirectTo: provider.appUrl },
      status: 200,
    });
    return String(body.data?.url);
  };
  /** A new person's link code, from a link this session started, through the provider and the callback. */
  const linkCode = async () => {
    const url = await linkStartUrl();
    const sub = `rt-linked-${crypto.randomUUID()}`;
    provider.identityProvider.setAccount({ sub, email: `${sub}@example.com`, email_verified: true });
    const linking = new ProviderBrowser();
    const back = await linking.visit(await linking.signIn(url, sub));
    return new URL(back.headers.get("location") ?? "").searchParams.get("link_code");
  };
  const calls: Record<string, () => Promise<Call> | Call> = {
    "auth/oauth/authorize": () => ({ path: start, method: "GET", headers: {}, status: 302 }),
    "auth/oauth/callback": async () => ({ ...await callbackOf(), method: "GET", status: 302 }),
    "auth/oauth/token": async () => ({
      path: "/auth/oauth/token",
      method: "POST",
      headers: apikey,
      body: { code: await oneTimeCode(), codeVerifier: verifier },
      status: 200,
    }),
    "auth/identities": () => ({ path: "/auth/identities", method: "GET", headers: signedIn, status: 200 }),
    // With a proof given: the opening statement checks it, the unlink finds nothing.
    "auth/identities DELETE": async () => {
      await proved();
      return {
        path: `/auth/identities?id=${crypto.randomUUID()}`,
        method: "DELETE",
        headers: signedIn,
        status: 404,
      };
    },
    // A session with a proof links without the password: one statement checks that and stores it.
    "auth/identities/link": async () => {
      await proved();
      return {
        path: "/auth/identities/link",
        method: "POST",
        headers: signedIn,
        body: { provider: "local", redirectTo: provider.appUrl },
        status: 200,
      };
    },
    // A proof's start at the provider: one statement checks the account has an identity there and stores the flow.
    "auth/reauthenticate/provider": () => ({
      path: "/auth/reauthenticate/provider",
      method: "POST",
      headers: signedIn,
      body: { provider: "local", redirectTo: provider.appUrl },
      status: 200,
    }),
    // A link's browser step: one statement binds the flow to the browser.
    "auth/identities/link/authorize": async () => {
      return { path: (await linkStartUrl()).slice(baseUrl.length), method: "GET", headers: {}, status: 302 };
    },
    // Each a new person's identity, linked by the session that asked: the code spent and the identity linked.
    "auth/identities/link/complete": async () => ({
      path: "/auth/identities/link/complete",
      method: "POST",
      headers: signedIn,
      body: { code: await linkCode() },
      status: 200,
    }),
  };
  return calls;
}

/** The identity provider the measured stack is configured with, as `local`, and the app URL it may return to. */
export interface BenchProvider {
  identityProvider: IdentityProvider;
  appUrl: string;
}

/**
 * Measures every endpoint through `proxy` (which the stack at `baseUrl` uses
 * to reach Postgres) without and with a delay of `rttMs` per round trip.
 * Calls that need a fresh object (a note to delete) make it before the timer starts.
 */
export async function measureRoundTrips(
  baseUrl: string,
  proxy: TcpProxy,
  options: {
    apiKey: string;
    rttMs: number;
    samples: number;
    grantAdmin: (email: string) => Promise<void>;
    /** Verifies an account's address, which enrolling a factor needs. */
    verifyAddress: (email: string) => Promise<void>;
    provider: BenchProvider;
  },
): Promise<RoundTripRow[]> {
  const { calls: userCalls, authorization, email } = await endpointCalls(baseUrl, options.apiKey);
  await options.grantAdmin(email);
  const calls = {
    ...userCalls,
    ...await adminCalls(baseUrl, options.apiKey, authorization),
    ...await secondFactorCalls(baseUrl, options.apiKey, options.verifyAddress),
    ...await providerCalls(baseUrl, options.apiKey, options.provider),
    ...await passkeyCalls(baseUrl, options.apiKey),
    ...anonymousCalls(baseUrl, options.apiKey),
    ...attachmentCalls(baseUrl, authorization),
  };
  const rows: RoundTripRow[] = [];
  for (const [endpoint, build] of Object.entries(calls)) {
    // Prepared up front so that making a note to delete is not timed with the delete.
    const prepared: Call[] = [];
    for (let index = 0; index < options.samples + 2; index++) prepared.push(await build());
    const delayed: Call[] = [];
    for (let index = 0; index < options.samples + 2; index++) delayed.push(await build());
    proxy.delay(0);
    const directMs = await medianLatency(baseUrl, () => prepared.shift() as Call, options.samples);
    proxy.delay(options.rttMs / 2);
    let delayedMs: number;
    try {
      delayedMs = await medianLatency(baseUrl, () => delayed.shift() as Call, options.samples);
    } finally {
      proxy.delay(0);
    }
    rows.push({ endpoint, directMs, delayedMs, roundTrips: (delayedMs - directMs) / options.rttMs });
  }
  return rows;
}

/**
 * The round trips per endpoint as a table, each against its target: proving a password commits its attempt before
 * the hash is checked (login, verify-email with the password, a proof with the password), and a provider's callback
 * spends its flow before the provider's code is exchanged, then concludes the sign-in, and a passkey's assertion
 * spends its challenge and reads the credential's public key before the signature can be checked, then records the
 * counter and the session or proof: two transactions each. Every other request is one.
 */
export function roundTripTable(rows: RoundTripRow[], rttMs: number): string {
  const twoTransactions = [
    "auth/login",
    "auth/verify-email with password",
    "auth/reauthenticate with the password",
    "auth/oauth/callback",
    ...passkeyTwoTransactions,
  ];
  const target = (endpoint: string) => twoTransactions.includes(endpoint) ? 2 : 1;
  return markdownTable(
    ["Endpoint", "p50 ms, no delay", `p50 ms, +${rttMs} ms RTT`, "Round trips", "Target"],
    rows.map((row) => [
      row.endpoint,
      row.directMs.toFixed(1),
      row.delayedMs.toFixed(1),
      row.roundTrips.toFixed(1),
      `${Math.round(row.roundTrips) <= target(row.endpoint) ? "met" : "MISSED"} (≤ ${target(row.endpoint)})`,
    ]),
  );
}
