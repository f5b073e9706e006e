/**
 * Sign-in with an OpenID Connect provider, as a person in a browser meets it
 * and as an attacker replays or forges it: against a real provider
 * (`oidc-provider`, dev/harness/identity-provider.ts) whose sign-in pages the test
 * drives, on a stack of its own configured with it. Nothing in the flow is
 * mocked on the service's side: it discovers the provider, redirects to it,
 * exchanges the code with PKCE and checks the signed ID token.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { identity, identityLinkStart, identityList, session } from "../supabase/functions/_shared/contract/mod.ts";
import { sessionEnvelope } from "./support/auth.ts";
import { freshAddress, readResetCode, uniqueEmail } from "./support/api.ts";
import { expectErrorCode } from "./support/error-codes.ts";
import { type IdentityProvider, ProviderBrowser, startIdentityProvider } from "../dev/harness/identity-provider.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";
import { freePort } from "../dev/harness/free-port.ts";

let stack: ScratchStack;
let provider: IdentityProvider;
const app = "http://127.0.0.1:5173/signed-in";
const password = "correct horse battery";

beforeAll(async () => {
  // The provider must know the callback's URL before the stack starts.
  const port = await freePort();
  provider = await startIdentityProvider({
    redirectUris: [`http://127.0.0.1:${port}/functions/v1/auth/oauth/callback`],
  });
  stack = await startScratchStack("provider_sign_in", {
    env: {
      BCRYPT_COST: "4",
      TRUST_PROXY: "true",
      PORT: String(port),
      // "offline" is configured, but nothing answers at its issuer.
      OIDC_PROVIDERS: "local,offline",
      OIDC_OFFLINE_ISSUER: `http://127.0.0.1:${await freePort()}`,
      OIDC_OFFLINE_CLIENT_ID: "offline-client",
      OIDC_OFFLINE_CLIENT_SECRET: "offline-secret",
      OIDC_LOCAL_ISSUER: provider.issuer,
      OIDC_LOCAL_CLIENT_ID: provider.clientId,
      OIDC_LOCAL_CLIENT_SECRET: provider.clientSecret,
      OIDC_ALLOW_HTTP: "true",
      OAUTH_REDIRECT_URLS: `${app},http://127.0.0.1:5173/settings`,
    },
  });
});

afterAll(async () => {
  await stack?.stop();
  await provider?.stop();
});

/** A person at the provider with a new subject and address. */
function newPerson(options: { email?: string; verified?: boolean; name?: string } = {}) {
  const sub = `person-${crypto.randomUUID()}`;
  const email = options.email ?? uniqueEmail("provider");
  provider.setAccount({ sub, email, email_verified: options.verified ?? true, name: options.name ?? "Ada Provider" });
  return { sub, email };
}

/** A browser navigation to the service: no apikey, redirects not followed. */
function navigate(url: string | URL): Promise<Response> {
  return fetch(url, { redirect: "manual", headers: { "x-forwarded-for": freshAddress() } });
}

function authorizeUrl(query: Record<string, string>): string {
  return `${stack.baseUrl}/auth/oauth/authorize?${new URLSearchParams(query)}`;
}

/** Follows a provider round trip from its start at the provider: the callback's URL at the service. */
async function throughProvider(providerUrl: string, sub: string, browser = new ProviderBrowser()): Promise<URL> {
  return await browser.signIn(providerUrl, sub);
}

/** The whole browser journey of a sign-in: where the service finally sends the browser back to the app. */
async function signInAtProvider(sub: string, browser = new ProviderBrowser(), redirectTo = app): Promise<URL> {
  const start = await navigate(authorizeUrl({ provider: "local", redirect_to: redirectTo }));
  expect(start.status, await start.clone().text()).toBe(302);
  const callback = await throughProvider(start.headers.get("location")!, sub, browser);
  expect(callback.href.startsWith(`${stack.baseUrl}/auth/oauth/callback?`)).toBe(true);
  return await backToApp(callback);
}

async function backToApp(callback: URL): Promise<URL> {
  const back = await navigate(callback);
  expect(back.status, await back.clone().text()).toBe(302);
  return new URL(back.headers.get("location")!);
}

function exchange(code: string) {
  return stack.call("/auth/oauth/token", { body: { code }, headers: { "x-forwarded-for": freshAddress() } });
}

async function signedIn(sub: string) {
  const back = await signInAtProvider(sub);
  expect(back.searchParams.get("error"), back.href).toBeNull();
  const response = await exchange(back.searchParams.get("code")!);
  expect(response.status, response.text).toBe(200);
  return sessionEnvelope.parse(response.body).data;
}

async function registerWithPassword(email: string) {
  const response = await stack.call("/auth/register", {
    body: { name: "Password Person", email, password },
    headers: { "x-forwarded-for": freshAddress() },
  });
  expect(response.status, response.text).toBe(201);
  return sessionEnvelope.parse(response.body).data;
}

/** The app completes a link with the `link_code` the callback put in its URL, as the asking session. */
function completeLink(accessToken: string, back: URL) {
  return stack.call("/auth/identities/link/complete", {
    token: accessToken,
    body: { code: back.searchParams.get("link_code") ?? "none" },
  });
}

async function identitiesOf(accessToken: string) {
  const response = await stack.call("/auth/identities", { token: accessToken });
  expect(response.status, response.text).toBe(200);
  return identityList.parse((response.body as { data: unknown }).data);
}

describe("a new person signs in with a provider", () => {
  it("gets an account of the provider's name and verified address, reaches notes, and the same account next time", async () => {
    const person = newPerson({ name: "Grace Hopper" });
    const browser = new ProviderBrowser();
    const back = await signInAtProvider(person.sub, browser);
    expect(back.origin + back.pathname).toBe(app);
    expect([...back.searchParams.keys()], "only the one-time code travels in the URL").toEqual(["code"]);
    const first = await exchange(back.searchParams.get("code")!);
    expect(first.status, first.text).toBe(200);
    const answer = sessionEnvelope.parse(first.body);
    expect(answer.message).toBe("Login successful");
    const { payload, accessToken, mfaRequired } = session.parse(answer.data);
    expect(payload).toMatchObject({ email: person.email, name: "Grace Hopper", isVerified: true });
    expect(mfaRequired).toBe(false);

    const note = await stack.call("/notes-create", {
      token: accessToken,
      body: { title: "From Google", content: "x" },
    });
    expect(note.status, note.text).toBe(201);

    // The same browser: the provider remembers it and shows no page; the same account answers.
    const again = await signInAtProvider(person.sub, browser);
    const second = sessionEnvelope.parse((await exchange(again.searchParams.get("code")!)).body).data;
    expect(second.payload.id).toBe(payload.id);
    const [{ count }] = await stack.sql`select count(*)::int from app.users where email = ${person.email}`;
    expect(count).toBe(1);
  });

  it("gets an unverified account when the provider does not vouch for the address", async () => {
    const person = newPerson({ verified: false });
    const { payload } = await signedIn(person.sub);
    expect(payload.isVerified).toBe(false);
  });

  it("takes the address's local part as the name when the provider gives none", async () => {
    const sub = `nameless-${crypto.randomUUID()}`;
    const email = uniqueEmail("nameless");
    provider.setAccount({ sub, email, email_verified: true });
    const { payload } = await signedIn(sub);
    expect(payload.name).toBe(email.split("@")[0]);
  });

  it("is signed in by its identity even after the provider's address changed", async () => {
    const person = newPerson();
    const { payload } = await signedIn(person.sub);
    provider.setAccount({ sub: person.sub, email: uniqueEmail("moved"), email_verified: true });
    expect((await signedIn(person.sub)).payload.id).toBe(payload.id);
  });
});

describe("the one-time code and the callback are single use", () => {
  it("refuses the code the second time", async () => {
    const back = await signInAtProvider(newPerson().sub);
    const code = back.searchParams.get("code")!;
    expect((await exchange(code)).status).toBe(200);
    expectErrorCode(await exchange(code), "invalid_code");
  });

  it("refuses a code after its 60 seconds", async () => {
    const back = await signInAtProvider(newPerson().sub);
    await stack.sql`update app.oauth_codes set expires_at = now() - interval '1 second'`;
    expectErrorCode(await exchange(back.searchParams.get("code")!), "invalid_code");
  });

  it("refuses a replayed callback and a forged state, with no redirect", async () => {
    const start = await navigate(authorizeUrl({ provider: "local", redirect_to: app }));
    const callback = await throughProvider(start.headers.get("location")!, newPerson().sub);
    const forged = new URL(callback);
    forged.searchParams.set("state", "forged-state-of-an-attacker");
    const refused = await navigate(forged);
    expect(refused.status).toBe(400);
    expect(refused.headers.get("location")).toBeNull();
    expect((await refused.json()).code).toBe("invalid_state");

    expect((await navigate(callback)).status).toBe(302);
    const replayed = await navigate(callback);
    expect(replayed.status).toBe(400);
    expect(replayed.headers.get("location")).toBeNull();
    expect((await replayed.json()).code).toBe("invalid_state");
  });

  it("takes the parameters a provider adds to its callback (Google's scope, authuser, prompt)", async () => {
    const start = await navigate(authorizeUrl({ provider: "local", redirect_to: app }));
    const callback = await throughProvider(start.headers.get("location")!, newPerson().sub);
    callback.searchParams.set("scope", "openid email profile");
    callback.searchParams.set("authuser", "0");
    callback.searchParams.set("prompt", "consent");
    expect((await backToApp(callback)).searchParams.get("code")).toBeTruthy();
  });

  it("sends the app an error, and no code, when the person cancels at the provider", async () => {
    const start = await navigate(authorizeUrl({ provider: "local", redirect_to: app }));
    const callback = await new ProviderBrowser().signIn(start.headers.get("location")!, newPerson().sub, {
      abort: true,
    });
    const back = await backToApp(callback);
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.get("code")).toBeNull();
  });
});

describe("the app's own PKCE", () => {
  const verifier = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
  const challenge = async (of: string) =>
    Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(of))).toString("base64url");

  async function codeFor(sub: string, query: Record<string, string>): Promise<string> {
    const start = await navigate(authorizeUrl({ provider: "local", redirect_to: app, ...query }));
    expect(start.status, await start.clone().text()).toBe(302);
    const back = await backToApp(await throughProvider(start.headers.get("location")!, sub));
    return back.searchParams.get("code")!;
  }

  it("exchanges the code only with the verifier of the challenge the sign-in started with", async () => {
    const person = newPerson();
    const mine = verifier();
    const bound = { code_challenge: await challenge(mine), code_challenge_method: "S256" };
    expectErrorCode(await exchange(await codeFor(person.sub, bound)), "invalid_code");
    const guessed = await codeFor(person.sub, bound);
    expectErrorCode(
      await stack.call("/auth/oauth/token", { body: { code: guessed, codeVerifier: verifier() } }),
      "invalid_code",
    );
    // A wrong verifier spends the code: the right one cannot follow it.
    expectErrorCode(
      await stack.call("/auth/oauth/token", { body: { code: guessed, codeVerifier: mine } }),
      "invalid_code",
    );
    const answered = await stack.call("/auth/oauth/token", {
      body: { code: await codeFor(person.sub, bound), codeVerifier: mine },
    });
    expect(answered.status, answered.text).toBe(200);
  });

  it("signs nobody in with an attacker's callback fed to another browser whose app waits with its own verifier", async () => {
    // The attacker starts a sign-in of their own, bound to their verifier, and hands the victim the callback URL.
    const attacker = newPerson();
    const start = await navigate(
      authorizeUrl({ provider: "local", redirect_to: app, code_challenge: await challenge(verifier()) }),
    );
    const callback = await throughProvider(start.headers.get("location")!, attacker.sub);
    const victimsApp = await backToApp(callback);
    const exchanged = await stack.call("/auth/oauth/token", {
      body: { code: victimsApp.searchParams.get("code"), codeVerifier: verifier() },
    });
    expectErrorCode(exchanged, "invalid_code");
  });

  it("refuses a verifier for a code whose sign-in had no challenge, and a challenge method other than S256", async () => {
    const code = await codeFor(newPerson().sub, {});
    expectErrorCode(
      await stack.call("/auth/oauth/token", { body: { code, codeVerifier: verifier() } }),
      "invalid_code",
    );
    const plain = await navigate(
      authorizeUrl({
        provider: "local",
        redirect_to: app,
        code_challenge: "a".repeat(43),
        code_challenge_method: "plain",
      }),
    );
    expect(plain.status).toBe(400);
    expect(plain.headers.get("location")).toBeNull();
  });
});

describe("the ID token", () => {
  it("is refused when it was altered on its way from the provider, and no account is made", async () => {
    const person = newPerson();
    // The payload says another address; the signature is still the provider's, over the original payload.
    provider.alterIdTokens((idToken) => {
      const [header, payload, signature] = idToken.split(".");
      const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
      const forged = Buffer.from(JSON.stringify({ ...claims, email: "victim@example.com" })).toString("base64url");
      return [header, forged, signature].join(".");
    });
    try {
      const back = await signInAtProvider(person.sub);
      expect(back.searchParams.get("error")).toBe("provider_error");
      expect(back.searchParams.get("code")).toBeNull();
    } finally {
      provider.alterIdTokens(undefined);
    }
    expect(await stack.sql`select 1 from app.identities where subject = ${person.sub}`).toHaveLength(0);
  });
});

describe("what a sign-in may ask for", () => {
  it("refuses an unknown provider and a redirect_to not listed, with no redirect", async () => {
    for (
      const [query, field] of [
        [{ provider: "nosuch", redirect_to: app }, "provider"],
        [{ provider: "local", redirect_to: "https://attacker.example/signed-in" }, "redirect_to"],
        [{ provider: "local", redirect_to: "http://127.0.0.1:5173/elsewhere" }, "redirect_to"],
        [{ provider: "local", redirect_to: `${app}#fragment` }, "redirect_to"],
      ] as const
    ) {
      const refused = await navigate(authorizeUrl(query));
      expect(refused.status, JSON.stringify(query)).toBe(400);
      expect(refused.headers.get("location")).toBeNull();
      const body = await refused.json();
      expect(body).toMatchObject({ statusCode: 400, code: "invalid_request" });
      expect(body.fields[0].field).toBe(field);
    }
  });

  it("answers 503, with no redirect, while a provider cannot be reached", async () => {
    const refused = await navigate(authorizeUrl({ provider: "offline", redirect_to: app }));
    expect(refused.status).toBe(503);
    expect(refused.headers.get("location")).toBeNull();
    expect((await refused.json()).code).toBe("service_unavailable");
  });

  it("refuses an unknown parameter of the authorize URL", async () => {
    const refused = await navigate(`${authorizeUrl({ provider: "local", redirect_to: app })}&prompt=none`);
    expect(refused.status).toBe(400);
  });

  it("keeps the app's own query in the URL it returns to", async () => {
    const back = await signInAtProvider(newPerson().sub, new ProviderBrowser(), `${app}?next=%2Fnotes`);
    expect(back.searchParams.get("next")).toBe("/notes");
    expect(back.searchParams.get("code")).toBeTruthy();
  });
});

describe("an address an account already holds", () => {
  it("is answered identity_not_linked, and nothing is created or linked", async () => {
    const email = uniqueEmail("taken");
    const owner = await registerWithPassword(email);
    const person = newPerson({ email });
    const back = await signInAtProvider(person.sub);
    expect(back.searchParams.get("error")).toBe("identity_not_linked");
    expect(back.searchParams.get("code")).toBeNull();
    const identities = await stack.sql`select 1 from app.identities where subject = ${person.sub}`;
    expect(identities).toHaveLength(0);
    expect((await identitiesOf(owner.accessToken)).identities).toEqual([]);
  });
});

describe("linking and unlinking", () => {
  it("links from a fresh session, and the provider then signs in to that account", async () => {
    const email = uniqueEmail("linker");
    const owner = await registerWithPassword(email);
    const person = newPerson({ email });
    const started = await stack.call("/auth/identities/link", {
      token: owner.accessToken,
      body: { provider: "local", redirectTo: "http://127.0.0.1:5173/settings" },
    });
    expect(started.status, started.text).toBe(200);
    const { url } = identityLinkStart.parse((started.body as { data: unknown }).data);
    const back = await backToApp(await throughProvider(url, person.sub));
    expect(back.pathname).toBe("/settings");
    expect([...back.searchParams.keys()]).toEqual(["link_code"]);
    const completed = await completeLink(owner.accessToken, back);
    expect(completed.status, completed.text).toBe(200);
    expect(identity.parse((completed.body as { data: unknown }).data)).toMatchObject({ provider: "local", email });

    const { identities, hasPassword } = await identitiesOf(owner.accessToken);
    expect(hasPassword).toBe(true);
    expect(identities).toMatchObject([{ provider: "local", email }]);
    expect((await signedIn(person.sub)).payload.id).toBe(owner.payload.id);
  });

  it("asks for the password once the session's sign-in is older than 10 minutes", async () => {
    const owner = await registerWithPassword(uniqueEmail("stale"));
    const sessionId = JSON.parse(atob(owner.accessToken.split(".")[1])).session_id;
    await stack.sql`update app.sessions set signed_in_at = now() - interval '11 minutes' where id = ${sessionId}`;
    const link = (body: Record<string, string>) =>
      stack.call("/auth/identities/link", {
        token: owner.accessToken,
        body: { provider: "local", redirectTo: app, ...body },
      });
    const missing = await link({});
    expectErrorCode(missing, "invalid_request");
    expect((missing.body as { fields: unknown }).fields).toEqual([{
      field: "password",
      message: "password is required",
    }]);
    expectErrorCode(await link({ password: "wrong password!" }), "invalid_credentials");
    expect((await link({ password })).status).toBe(200);
  });

  it("links only for the session that asked: a link URL opened in another browser links nothing", async () => {
    const asking = await registerWithPassword(uniqueEmail("asking"));
    const started = await stack.call("/auth/identities/link", {
      token: asking.accessToken,
      body: { provider: "local", redirectTo: app },
    });
    const { url } = identityLinkStart.parse((started.body as { data: unknown }).data);
    // Someone else, signed in to the app in their own browser, is made to open the URL.
    const someoneElse = await registerWithPassword(uniqueEmail("someone"));
    const back = await backToApp(await throughProvider(url, newPerson().sub));
    expectErrorCode(await completeLink(someoneElse.accessToken, back), "invalid_code");
    // The code is spent: not even the asking session can use it now.
    expectErrorCode(await completeLink(asking.accessToken, back), "invalid_code");
    expect((await identitiesOf(asking.accessToken)).identities).toEqual([]);
    expect((await identitiesOf(someoneElse.accessToken)).identities).toEqual([]);
  });

  it("refuses an identity that belongs to another account", async () => {
    const person = newPerson();
    await signedIn(person.sub);
    const other = await registerWithPassword(uniqueEmail("other"));
    const started = await stack.call("/auth/identities/link", {
      token: other.accessToken,
      body: { provider: "local", redirectTo: app },
    });
    const { url } = identityLinkStart.parse((started.body as { data: unknown }).data);
    const back = await backToApp(await throughProvider(url, person.sub));
    expect(back.searchParams.get("error")).toBe("identity_already_linked");
    expect((await identitiesOf(other.accessToken)).identities).toEqual([]);
  });

  it("refuses to unlink the last way to sign in, and unlinks once a password is set", async () => {
    const person = newPerson();
    const { accessToken } = await signedIn(person.sub);
    const { identities, hasPassword } = await identitiesOf(accessToken);
    expect(hasPassword).toBe(false);
    const unlink = (token: string) =>
      stack.call(`/auth/identities?id=${identities[0].id}`, { method: "DELETE", token });
    expectErrorCode(await unlink(accessToken), "last_sign_in_method");

    // A fresh provider sign-in stands in for the password it does not have.
    const changed = await stack.call("/auth/change-password", {
      token: accessToken,
      body: { newPassword: password },
    });
    expect(changed.status, changed.text).toBe(200);
    const { accessToken: newToken } = sessionEnvelope.parse(changed.body).data;
    const removed = await unlink(newToken);
    expect(removed.status, removed.text).toBe(200);
    expect((await identitiesOf(newToken)).identities).toEqual([]);
    expectErrorCode(await unlink(newToken), "identity_not_found");
  });
});

describe("an account without a password", () => {
  it("cannot log in with any password", async () => {
    const person = newPerson();
    await signedIn(person.sub);
    for (const guess of [password, "", "null", "undefined"]) {
      const response = await stack.call("/auth/login", {
        body: { email: person.email, password: guess || "x" },
        headers: { "x-forwarded-for": freshAddress() },
      });
      expectErrorCode(response, guess === "" ? "invalid_credentials" : "invalid_credentials");
    }
  });

  it("changes or deletes only with a provider sign-in of the last 10 minutes", async () => {
    const person = newPerson();
    const { accessToken, payload } = await signedIn(person.sub);
    const sessionId = JSON.parse(atob(accessToken.split(".")[1])).session_id;
    await stack.sql`update app.sessions set signed_in_at = now() - interval '11 minutes' where id = ${sessionId}`;
    expectErrorCode(
      await stack.call("/auth/change-password", { token: accessToken, body: { newPassword: password } }),
      "invalid_request",
    );
    expectErrorCode(await stack.call("/auth/delete-account", { token: accessToken, body: {} }), "invalid_request");

    const fresh = await signedIn(person.sub);
    const deleted = await stack.call("/auth/delete-account", { token: fresh.accessToken, body: {} });
    expect(deleted.status, deleted.text).toBe(200);
    expect(await stack.sql`select 1 from app.users where id = ${payload.id}`).toHaveLength(0);
  });

  it("a password session never stands in for the password", async () => {
    const owner = await registerWithPassword(uniqueEmail("pw"));
    expectErrorCode(
      await stack.call("/auth/delete-account", { token: owner.accessToken, body: {} }),
      "invalid_request",
    );
  });
});

describe("the security log and the mail", () => {
  it("records the sign-up, each sign-in, the link and the unlink, and mails the link", async () => {
    const email = uniqueEmail("events");
    const owner = await registerWithPassword(email);
    const person = newPerson({ email });
    const started = await stack.call("/auth/identities/link", {
      token: owner.accessToken,
      body: { provider: "local", redirectTo: app },
    });
    const { url } = identityLinkStart.parse((started.body as { data: unknown }).data);
    expect((await completeLink(owner.accessToken, await backToApp(await throughProvider(url, person.sub)))).status)
      .toBe(200);
    const { accessToken } = await signedIn(person.sub);
    const [identity] = (await identitiesOf(accessToken)).identities;
    await stack.call(`/auth/identities?id=${identity.id}`, { method: "DELETE", token: accessToken });

    const events = await stack.sql<{ type: string; details: Record<string, string> }[]>`
      select type, details from app.security_events
      where user_id = ${owner.payload.id} and type <> 'session_started' order by id`;
    expect(events.map((event) => event.type)).toEqual([
      "registered",
      "identity_linked",
      "login_succeeded",
      "identity_unlinked",
    ]);
    expect(events[2].details.provider).toBe("local");
    const mails = await stack.sql`select subject from app.mail_outbox where recipient = ${email}`;
    expect(mails.map((mail) => mail.subject)).toContain("A sign-in method was added to your account");

    const newcomer = newPerson();
    const { payload } = await signedIn(newcomer.sub);
    const made = await stack.sql<{ type: string; details: Record<string, string> }[]>`
      select type, details from app.security_events
      where user_id = ${payload.id} and type <> 'session_started' order by id`;
    expect(made.map((event) => [event.type, event.details.provider])).toEqual([
      ["registered", undefined],
      ["identity_linked", "local"],
      ["login_succeeded", "local"],
    ]);
  });
});

describe("an identity whose address the provider did not vouch for", () => {
  it("is dropped when the address's owner sets a password with a reset code", async () => {
    const person = newPerson({ verified: false });
    const { payload } = await signedIn(person.sub);
    // The address's owner takes the account over with the mailed code of a reset.
    const requested = await stack.call("/auth/request-password-reset", {
      body: { email: person.email },
      headers: { "x-forwarded-for": freshAddress() },
    });
    expect(requested.status, requested.text).toBe(200);
    const code = await readResetCode(person.email, 0, stack.logFile);
    const set = await stack.call("/auth/create-password", {
      body: { email: person.email, password, code },
      headers: { "x-forwarded-for": freshAddress() },
    });
    expect(set.status, set.text).toBe(200);
    expect(await stack.sql`select 1 from app.identities where subject = ${person.sub}`).toHaveLength(0);
    const [dropped] = await stack.sql<{ details: Record<string, string> }[]>`
      select details from app.security_events where user_id = ${payload.id} and type = 'identity_unlinked'`;
    expect(dropped.details).toMatchObject({ provider: "local", reason: "password_set_with_code" });
    const back = await signInAtProvider(person.sub);
    expect(back.searchParams.get("error"), "the address is the owner's now").toBe("identity_not_linked");
  });
});

describe("LOCAL_IDENTITY_PROVIDER=true", () => {
  it("runs a local provider as `local` at which any name signs in, as a developer tries it", async () => {
    const local = await startScratchStack("local_provider", {
      env: { BCRYPT_COST: "4", LOCAL_IDENTITY_PROVIDER: "true" },
    });
    try {
      const start = await fetch(
        `${local.baseUrl}/auth/oauth/authorize?${new URLSearchParams({
          provider: "local",
          redirect_to: "http://127.0.0.1:5173/",
        })}`,
        { redirect: "manual" },
      );
      expect(start.status, await start.clone().text()).toBe(302);
      const callback = await new ProviderBrowser().signIn(start.headers.get("location")!, "Grace");
      const back = await fetch(callback, { redirect: "manual" });
      const code = new URL(back.headers.get("location")!).searchParams.get("code");
      const signedIn = await local.call("/auth/oauth/token", { body: { code } });
      expect(sessionEnvelope.parse(signedIn.body).data.payload).toMatchObject({
        email: "grace@example.com",
        name: "Grace",
        isVerified: true,
      });
    } finally {
      await local.stop();
    }
  });
});
