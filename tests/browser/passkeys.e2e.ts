/**
 * The real passkey ceremonies in headless Chromium: a virtual authenticator of the DevTools protocol
 * (`WebAuthn.addVirtualAuthenticator`: an internal platform authenticator with resident keys and user verification,
 * its counter moving on with each use) answers `navigator.credentials.create()` and `.get()` on a page served from
 * `http://localhost`, with the service's options parsed by `PublicKeyCredential.parseCreationOptionsFromJSON` and
 * `parseRequestOptionsFromJSON`, and `credential.toJSON()` sent back, as an app does. Registered with a proof,
 * then signed in with no email typed; an authenticator that does not verify its user is refused by the service; a
 * clone of a key (its private key read with `WebAuthn.getCredentials` and added to another authenticator with a lower
 * counter) is refused and logged. In the demo app: the button, and the email field's autofill (conditional UI) that
 * the sign-in page starts as it opens, answered by the authenticator or ended by a password login.
 */
import type { Browser, CDPSession, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { anonKey, call, uniqueEmail } from "../support/api.ts";
import { decodeAccessToken } from "../support/auth.ts";
import { launchChromium } from "./chromium.ts";
import { serveDemoApp } from "./demo-app.ts";

const functionsUrl = inject("baseUrl");
const password = "correct horse battery";

let browser: Browser;
let app: Awaited<ReturnType<typeof serveDemoApp>>;

beforeAll(async () => {
  app = await serveDemoApp(functionsUrl, anonKey);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
});

/**
 * A page on `http://localhost` (browsers run no ceremony on an IP address) with a virtual authenticator: the demo
 * app, whose sign-in page asks for a passkey on its own (the email field's autofill) unless `autofill` is false. The
 * tests that run ceremonies themselves turn it off (the browser says it has no autofill for passkeys), so that no
 * ceremony they did not ask for moves a counter.
 */
async function pageWithAuthenticator(
  options: {
    userVerified: boolean;
    synced?: boolean;
    presence?: boolean;
    autofill?: boolean;
    /** A passkey on the authenticator before the page opens, as the DevTools protocol gives it. */
    credential?: Credential;
    /** Runs before the page opens (scripts to add to it). */
    before?: (page: Page) => Promise<void>;
  },
): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: options.userVerified,
      // Without it the authenticator answers nothing until `WebAuthn.setAutomaticPresenceSimulation` turns it on.
      automaticPresenceSimulation: options.presence ?? true,
      // A synced passkey (iCloud Keychain, Google Password Manager) says so in its backup flags.
      defaultBackupEligibility: options.synced ?? false,
      defaultBackupState: options.synced ?? false,
    },
  });
  if (!options.autofill) {
    await page.addInitScript(() => {
      // deno-lint-ignore no-explicit-any
      (globalThis as any).PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false);
    });
  }
  if (options.credential) {
    await cdp.send("WebAuthn.addCredential", { authenticatorId, credential: options.credential });
  }
  await options.before?.(page);
  await page.goto(app.signInUrl.replace("127.0.0.1", "localhost"));
  return { page, cdp, authenticatorId };
}

/** The virtual authenticator's credentials, as the DevTools protocol gives them (with their private keys). */
async function credentialsOf(cdp: CDPSession, authenticatorId: string) {
  return (await cdp.send("WebAuthn.getCredentials", { authenticatorId })).credentials;
}

/** A credential as `WebAuthn.getCredentials` gives it and `WebAuthn.addCredential` takes it. */
type Credential = Awaited<ReturnType<typeof credentialsOf>>[number];

/** The virtual authenticator's only credential, as the DevTools protocol gives it (with its private key). */
async function onlyCredential(cdp: CDPSession, authenticatorId: string): Promise<Credential> {
  const credentials = await credentialsOf(cdp, authenticatorId);
  expect(credentials).toHaveLength(1);
  return credentials[0];
}

/** The account's security events of `type`, from its own log (`GET /auth/events`), newest first. */
async function eventsOf(accessToken: string, type: string) {
  const answer = await call("/auth/events?limit=100", { token: accessToken });
  expect(answer.status, answer.text).toBe(200);
  const { events } = (answer.body as { data: { events: { type: string; details: Record<string, unknown> }[] } }).data;
  return events.filter((event) => event.type === type);
}

/**
 * What the page asked of `navigator.credentials.get`: each call's `mediation`, how it ended so far (the error's name
 * when it failed), and whether the page aborted it while it was pending.
 */
interface AskedGet {
  mediation: string | null;
  outcome: "pending" | "answered" | string;
  aborted: boolean;
}

/** Records every `navigator.credentials.get` the page makes, from its first script on, for `askedGets`. */
async function recordGets(page: Page): Promise<void> {
  await page.addInitScript(() => {
    // deno-lint-ignore no-explicit-any
    const web = globalThis as any;
    const asked: AskedGet[] = [];
    web.askedGets = asked;
    const get = web.navigator.credentials.get.bind(web.navigator.credentials);
    web.navigator.credentials.get = (options: { mediation?: string; signal?: AbortSignal }) => {
      const entry: AskedGet = { mediation: options?.mediation ?? null, outcome: "pending", aborted: false };
      asked.push(entry);
      // Ended by the page while it waited (an abort after the answer changes nothing).
      options?.signal?.addEventListener("abort", () => (entry.aborted ||= entry.outcome === "pending"));
      const answer = get(options);
      answer.then(() => (entry.outcome = "answered"), (error: Error) => (entry.outcome = error.name));
      return answer;
    };
  });
}

/** The page's `navigator.credentials.get` calls so far (see `recordGets`). */
function askedGets(page: Page): Promise<AskedGet[]> {
  // deno-lint-ignore no-explicit-any
  return page.evaluate(() => (globalThis as any).askedGets);
}

/** A passkey registered for the account on a device of its own, read back with its private key. */
async function registeredKey(accessToken: string): Promise<Credential> {
  const device = await pageWithAuthenticator({ userVerified: true });
  expect((await registerInPage(device.page, accessToken)).status).toBe(201);
  const key = await onlyCredential(device.cdp, device.authenticatorId);
  await device.page.context().close();
  return key;
}

/** An account signed in over HTTP that has just proved its password: registering a passkey needs that. */
async function provenAccount() {
  const email = uniqueEmail("chromium-passkey");
  const registered = await call("/auth/register", { body: { name: "Ada", email, password } });
  expect(registered.status, registered.text).toBe(201);
  const token = (registered.body as { data: { accessToken: string; payload: { id: string } } }).data;
  const proof = await call("/auth/reauthenticate", { body: { password }, token: token.accessToken });
  expect(proof.status, proof.text).toBe(200);
  return { email, accessToken: token.accessToken, userId: token.payload.id };
}

interface Answer {
  status: number;
  body: { data?: Record<string, unknown>; code?: string };
}

/** In the page: the registration ceremony, as an app runs it; the service's answer to the credential. */
function registerInPage(page: Page, accessToken: string): Promise<Answer> {
  return page.evaluate(async ({ base, apikey, token }) => {
    const headers = { "content-type": "application/json", apikey, authorization: token };
    const post = (path: string, body: unknown) =>
      fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
    const options = (await (await post("/auth/passkeys/register/options", {})).json()).data.options;
    // The page's WebAuthn API, which the tests' types (Deno's, without the DOM) do not declare.
    // deno-lint-ignore no-explicit-any
    const web = globalThis as any;
    const credential = await web.navigator.credentials.create({
      publicKey: web.PublicKeyCredential.parseCreationOptionsFromJSON(options),
    });
    const answer = await post("/auth/passkeys/register", { response: credential.toJSON(), name: "Chromium" });
    return { status: answer.status, body: await answer.json() };
  }, { base: functionsUrl, apikey: anonKey, token: accessToken });
}

/**
 * In the page: a usernameless sign-in, no account named. `uvAsked` is what the page asks of the authenticator:
 * a page that asks for no verification gets an answer without it, which the service must refuse.
 */
function signInInPage(page: Page, uvAsked: "required" | "discouraged" = "required"): Promise<Answer> {
  return page.evaluate(async ({ base, apikey, userVerification }) => {
    const headers = { "content-type": "application/json", apikey };
    const post = (path: string, body: unknown) =>
      fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
    const options = (await (await post("/auth/passkeys/login/options", {})).json()).data.options;
    // deno-lint-ignore no-explicit-any
    const web = globalThis as any;
    const credential = await web.navigator.credentials.get({
      publicKey: web.PublicKeyCredential.parseRequestOptionsFromJSON({ ...options, userVerification }),
    });
    const answer = await post("/auth/passkeys/login", { response: credential.toJSON() });
    return { status: answer.status, body: await answer.json() };
  }, { base: functionsUrl, apikey: anonKey, userVerification: uvAsked });
}

describe("passkeys in Chromium with a virtual authenticator", () => {
  it("registers a passkey with a proof and signs in with it, no email typed, at aal2", async () => {
    const account = await provenAccount();
    const { page, cdp, authenticatorId } = await pageWithAuthenticator({ userVerified: true });
    const registered = await registerInPage(page, account.accessToken);
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    expect(registered.body.data?.passkey).toMatchObject({ name: "Chromium", lastUsedAt: null });

    const signedIn = await signInInPage(page);
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
    const session = signedIn.body.data as { accessToken: string; payload: { id: string }; mfaRequired: boolean };
    expect(session.payload.id).toBe(account.userId);
    expect(session.mfaRequired).toBe(false);
    expect(decodeAccessToken(session.accessToken).claims.aal).toBe("aal2");
    // A discoverable credential, its counter moving on with each use; the next sign-in's higher one is accepted.
    const again = await signInInPage(page);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0].isResidentCredential).toBe(true);
    // Counted at registration and at each of the two sign-ins.
    expect(credentials[0].signCount, "the authenticator's counter after two sign-ins").toBe(3);
    await page.context().close();
  });

  it("refuses a device-bound passkey whose counter goes back (a cloned key) and logs it; accepts a synced one", async () => {
    const account = await provenAccount();
    const original = await pageWithAuthenticator({ userVerified: true });
    expect((await registerInPage(original.page, account.accessToken)).status).toBe(201);
    for (let time = 0; time < 2; time += 1) expect((await signInInPage(original.page)).status).toBe(200);
    const key = await onlyCredential(original.cdp, original.authenticatorId);
    // Counted once at registration and once per sign-in: the service last accepted 3.
    expect(key).toMatchObject({ signCount: 3, backupEligibility: false, backupState: false });

    // The clone: the same private key and credential id on another device, its counter behind the original's.
    const clone = await pageWithAuthenticator({ userVerified: true });
    await clone.cdp.send("WebAuthn.addCredential", {
      authenticatorId: clone.authenticatorId,
      credential: { ...key, signCount: 0 },
    });
    const refused = await signInInPage(clone.page);
    expect(refused.status, JSON.stringify(refused.body)).toBe(401);
    expect(refused.body.code).toBe("passkey_rejected");
    const [logged] = await eventsOf(account.accessToken, "passkey_counter_regressed");
    expect(logged?.details).toMatchObject({ storedCount: 3, presentedCount: 1 });
    // The original device, its counter ahead, still signs in.
    expect((await signInInPage(original.page)).status).toBe(200);
    await clone.page.context().close();
    await original.page.context().close();

    // A synced passkey (its backup flags set) is accepted and listed as synced. Chromium's virtual authenticator
    // counts on every use, synced or not, so the "0 and 0" of a synced passkey that keeps no counter is covered
    // over HTTP (passkeys.test.ts).
    const synced = await pageWithAuthenticator({ userVerified: true, synced: true });
    const added = await registerInPage(synced.page, account.accessToken);
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    expect(added.body.data?.passkey).toMatchObject({ synced: true });
    for (let time = 0; time < 2; time += 1) {
      const signedIn = await signInInPage(synced.page);
      expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
    }
    expect(await onlyCredential(synced.cdp, synced.authenticatorId)).toMatchObject({
      backupEligibility: true,
      backupState: true,
    });
    await synced.page.context().close();
  });

  it("refuses a registration without a proof given for it", async () => {
    const email = uniqueEmail("chromium-bare");
    const registered = await call("/auth/register", { body: { name: "Bare", email, password } });
    const { accessToken } = (registered.body as { data: { accessToken: string } }).data;
    const { page } = await pageWithAuthenticator({ userVerified: true });
    const refused = await page.evaluate(async ({ base, apikey, token }) => {
      const answer = await fetch(`${base}/auth/passkeys/register/options`, {
        method: "POST",
        headers: { "content-type": "application/json", apikey, authorization: token },
        body: "{}",
      });
      return { status: answer.status, body: await answer.json() };
    }, { base: functionsUrl, apikey: anonKey, token: accessToken });
    expect(refused).toMatchObject({ status: 403, body: { code: "reauthentication_required" } });
    await page.context().close();
  });

  it("refuses an assertion made without user verification", async () => {
    const account = await provenAccount();
    const { page, cdp, authenticatorId } = await pageWithAuthenticator({ userVerified: true });
    expect((await registerInPage(page, account.accessToken)).status).toBe(201);
    // The same authenticator, now unable to verify its user, asked by a page that does not ask for it.
    await cdp.send("WebAuthn.setUserVerified", { authenticatorId, isUserVerified: false });
    const refused = await signInInPage(page, "discouraged");
    expect(refused.status, JSON.stringify(refused.body)).toBe(401);
    expect(refused.body.code).toBe("passkey_rejected");
    await page.context().close();
  });

  it("in the demo app: adds a passkey after confirming it's you, then signs in with it, no email typed", async () => {
    const { page } = await pageWithAuthenticator({ userVerified: true });
    const email = uniqueEmail("demo-passkey");
    const register = page.locator("#register-form");
    await register.getByLabel("Name", { exact: true }).fill("Ada Lovelace");
    await register.getByLabel("Email", { exact: true }).fill(email);
    await register.getByLabel("Password", { exact: true }).fill(password);
    await register.getByRole("button", { name: "Register" }).click();
    await page.getByText(`Signed in as Ada Lovelace (${email})`).waitFor();
    await page.getByText("Account: password, sessions, second factor, deletion").click();
    await page.getByText("No passkey yet").waitFor();
    // Without a proof the service refuses, and the page says what to do.
    await page.locator("#passkey-add-form").getByRole("button", { name: "Add a passkey" }).click();
    await page.locator("#passkey-add-form", { hasText: "Confirm it is you first" }).waitFor();
    const confirm = page.locator("#passkey-confirm-form");
    await confirm.getByLabel("Password", { exact: true }).fill(password);
    await confirm.getByRole("button", { name: "Confirm with the password" }).click();
    await page.locator("#info", { hasText: "Confirmed" }).waitFor();
    await page.locator("#passkey-add-form").getByLabel("Name (optional)").fill("Demo laptop");
    await page.locator("#passkey-add-form").getByRole("button", { name: "Add a passkey" }).click();
    await page.locator("#passkey-list", { hasText: "Demo laptop" }).waitFor();

    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await page.locator("#signed-out").waitFor();
    // The button asks with a dialog (this page has no autofill for passkeys: the tests below drive that).
    await page.getByRole("button", { name: "Sign in with a passkey" }).click();
    await page.getByText(`Signed in as Ada Lovelace (${email})`).waitFor();
    await page.context().close();
  });

  it("in the demo app: the email field's autofill asks for a passkey on load and signs in with it, no click", async () => {
    const account = await provenAccount();
    const key = await registeredKey(account.accessToken);
    const { page } = await pageWithAuthenticator({
      userVerified: true,
      autofill: true,
      credential: key,
      before: recordGets,
    });
    // The authenticator answers at once (Chromium's automatic presence picks the one passkey for the autofill).
    await page.getByText(`Signed in as Ada (${account.email})`).waitFor();
    expect(await askedGets(page)).toEqual([{ mediation: "conditional", outcome: "answered", aborted: false }]);
    await page.context().close();
  });

  it("in the demo app: the autofill's request waits for a pick, and ends when the user logs in with the password", async () => {
    const account = await provenAccount();
    const key = await registeredKey(account.accessToken);
    // An authenticator that answers nothing: the person has not picked the passkey in the autofill.
    const { page } = await pageWithAuthenticator({
      userVerified: true,
      presence: false,
      autofill: true,
      credential: key,
      before: recordGets,
    });
    const login = page.locator("#login-form");
    expect(await login.getByLabel("Email", { exact: true }).getAttribute("autocomplete")).toBe("username webauthn");
    await expect.poll(() => askedGets(page)).toEqual([{
      mediation: "conditional",
      outcome: "pending",
      aborted: false,
    }]);
    expect(await page.locator("#signed-out").isVisible()).toBe(true);

    await login.getByLabel("Email", { exact: true }).fill(account.email);
    await login.getByLabel("Password", { exact: true }).fill(password);
    await login.getByRole("button", { name: "Log in" }).click();
    await page.getByText(`Signed in as Ada (${account.email})`).waitFor();
    await expect.poll(() => askedGets(page)).toEqual([{
      mediation: "conditional",
      outcome: "AbortError",
      aborted: true,
    }]);
    await page.context().close();
  });
});
