/**
 * Provider sign-in as a hostile client attacks it: login and link CSRF, pre-hijacked accounts that outlive the
 * owner's reset, races on the single-use steps, return URLs that try to leave the app, and flooding. A test that
 * fails here names a weakness of the current code: it asserts the secure behaviour.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { activation, enrollment, identityLinkStart } from "../supabase/functions/_shared/contract/mod.ts";
import { codeAt, totpPolicy } from "../supabase/functions/_shared/auth/totp.ts";
import { sessionEnvelope } from "./support/auth.ts";
import { freshAddress, readMailedCode, readResetCode, uniqueEmail } from "./support/api.ts";
import { expectErrorCode } from "./support/error-codes.ts";
import {
  type IdentityProvider,
  identityProviderForStack,
  ProviderBrowser,
  startIdentityProvider,
} from "../dev/harness/identity-provider.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";
import { journeyPassword, ProviderJourneys } from "./support/provider-journeys.ts";

let stack: ScratchStack;
let provider: IdentityProvider;
/** A second provider the stack is configured with, `hostile`, run by an attacker. */
let hostile: IdentityProvider;
let journeys: ProviderJourneys;
const app = "http://127.0.0.1:5173/signed-in";
const settingsPage = "http://127.0.0.1:5173/settings";
const password = journeyPassword;
const addressLimit = 5;

beforeAll(async () => {
  let env: Record<string, string>;
  ({ provider, env } = await identityProviderForStack([app, settingsPage]));
  hostile = await startIdentityProvider({
    redirectUris: [`http://127.0.0.1:${env.PORT}/functions/v1/auth/oauth/callback/hostile`],
    withoutIssParameter: true,
  });
  stack = await startScratchStack("provider_attacks", {
    env: {
      ...env,
      OIDC_PROVIDERS: "local,hostile",
      OIDC_HOSTILE_ISSUER: hostile.issuer,
      OIDC_HOSTILE_CLIENT_ID: hostile.clientId,
      OIDC_HOSTILE_CLIENT_SECRET: hostile.clientSecret,
      BCRYPT_COST: "4",
      TRUST_PROXY: "true",
      LOGIN_MAX_ATTEMPTS_PER_ADDRESS: String(addressLimit),
    },
  });
  journeys = new ProviderJourneys(stack, provider, app);
});

afterAll(async () => {
  await stack?.stop();
  await provider?.stop();
  await hostile?.stop();
});

function startLink(accessToken: string, body: Record<string, string> = {}, address = freshAddress()) {
  return stack.call("/auth/identities/link", {
    token: accessToken,
    body: { provider: "local", redirectTo: settingsPage, ...body },
    headers: { "x-forwarded-for": address },
  });
}

async function linkUrl(accessToken: string): Promise<string> {
  const started = await startLink(accessToken);
  expect(started.status, started.text).toBe(200);
  return identityLinkStart.parse((started.body as { data: unknown }).data).url;
}

/** Goes through the provider with `url` as `sub` and completes the link as the session of `accessToken`. */
async function linkAs(accessToken: string, url: string, sub: string): Promise<void> {
  const back = await journeys.backToApp(await new ProviderBrowser().signIn(url, sub));
  const completed = await stack.call("/auth/identities/link/complete", {
    token: accessToken,
    body: { code: back.searchParams.get("link_code") },
  });
  expect(completed.status, completed.text).toBe(200);
}

function sessionIdOf(accessToken: string): string {
  return JSON.parse(atob(accessToken.split(".")[1])).session_id;
}

/** The owner of `email` takes the account over with a mailed reset code. */
async function ownerResets(email: string) {
  const requested = await stack.call("/auth/request-password-reset", {
    body: { email },
    headers: { "x-forwarded-for": freshAddress() },
  });
  expect(requested.status, requested.text).toBe(200);
  const code = await readResetCode(email, 0, stack.logFile);
  const set = await stack.call("/auth/create-password", {
    body: { email, password, code },
    headers: { "x-forwarded-for": freshAddress() },
  });
  expect(set.status, set.text).toBe(200);
}

describe("a pre-hijacked account (made by a provider that did not vouch for the address)", () => {
  it("loses the attacker's identity at the owner's reset even after the provider later vouched for another address", async () => {
    const victimEmail = uniqueEmail("victim");
    const attacker = journeys.newPerson({ email: victimEmail, verified: false });
    const { payload } = await journeys.signedIn(attacker.sub);
    // The attacker changes the address at the provider to one of his own that it does verify, and signs in again:
    // the identity now says email_verified, though it never proved the account's address.
    provider.setAccount({ sub: attacker.sub, email: uniqueEmail("attacker-own"), email_verified: true });
    expect((await journeys.signedIn(attacker.sub)).payload.id).toBe(payload.id);

    await ownerResets(victimEmail);
    expect(await stack.sql`select 1 from app.identities where subject = ${attacker.sub}`).toHaveLength(0);
    // The attacker's next sign-in is a stranger's: an account of their own address, never the owner's.
    expect(
      (await journeys.signedIn(attacker.sub)).payload.id,
      "the attacker signs in to the account its owner took over",
    )
      .not.toBe(payload.id);
  });

  it("loses a second identity the attacker linked to it before the owner's reset", async () => {
    const victimEmail = uniqueEmail("victim2");
    const unproven = journeys.newPerson({ email: victimEmail, verified: false });
    const { accessToken, payload } = await journeys.signedIn(unproven.sub);
    // Proving it is them at the provider (their own identity there), the attacker links a second identity, verified
    // for an address of his own.
    await journeys.reauthenticatedAtProvider(accessToken, unproven.sub);
    const second = journeys.newPerson({ email: uniqueEmail("attacker-second"), verified: true });
    await linkAs(accessToken, await linkUrl(accessToken), second.sub);

    await ownerResets(victimEmail);
    expect(await stack.sql`select 1 from app.identities where subject = ${second.sub}`).toHaveLength(0);
    expect((await journeys.signedIn(second.sub)).payload.id, "the attacker signs in to the account its owner took over")
      .not.toBe(payload.id);
  });

  it("keeps an identity its owner linked while the address was proven, longer ago than RESET_REVOKES_RECENT_DAYS", async () => {
    const email = uniqueEmail("proven");
    const owner = await journeys.registerWithPassword(email);
    // The owner proves the address with the mailed code, then links a provider from a fresh session.
    const verification = await readMailedCode(email, { kind: "verification", logFile: stack.logFile });
    const verified = await stack.call("/auth/verify-email", {
      token: owner.accessToken,
      body: { email, code: verification },
    });
    expect(verified.status, verified.text).toBe(200);
    const linked = journeys.newPerson({ email: uniqueEmail("owner-elsewhere"), verified: false });
    const recent = journeys.newPerson({ email: uniqueEmail("owner-lately"), verified: true });
    await journeys.reauthenticated(owner.accessToken);
    await linkAs(owner.accessToken, await linkUrl(owner.accessToken), linked.sub);
    await linkAs(owner.accessToken, await linkUrl(owner.accessToken), recent.sub);
    await stack.sql`update app.identities set created_at = now() - interval '8 days' where subject = ${linked.sub}`;

    await ownerResets(email);
    expect((await journeys.signedIn(linked.sub)).payload.id).toBe(owner.payload.id);
    // One linked in the 7 days before the reset goes with it: an identity is a way in, as the password it replaces.
    expect((await journeys.signedIn(recent.sub)).payload.id).not.toBe(owner.payload.id);
  });
});

describe("flows not bound to the browser that started them", () => {
  it("does not link the victim's identity to the attacker's account when the victim opens the attacker's link URL", async () => {
    const attacker = await journeys.registerWithPassword(uniqueEmail("csrf-attacker"));
    await journeys.reauthenticated(attacker.accessToken);
    const url = await linkUrl(attacker.accessToken);
    // The victim, signed in at the provider in the browser, follows a link the attacker sent.
    const victim = journeys.newPerson({ email: uniqueEmail("csrf-victim") });
    const victimBrowser = new ProviderBrowser();
    const callback = await victimBrowser.signIn(url, victim.sub);
    const back = await journeys.backToApp(callback);
    // The victim's app, signed in to the victim's own account, completes what came back: not its session's link.
    const victimsAccount = await journeys.registerWithPassword(victim.email);
    const completed = await stack.call("/auth/identities/link/complete", {
      token: victimsAccount.accessToken,
      body: { code: back.searchParams.get("link_code") },
    });
    expectErrorCode(completed, "invalid_code");
    expect(
      (await journeys.identitiesOf(attacker.accessToken)).identities,
      "the victim's identity now opens the attacker's account",
    )
      .toEqual([]);
  });
});

describe("flows bound to the browser that started them (RFC 9700 4.7.1)", () => {
  async function nobodySignedIn(sub: string) {
    expect(await stack.sql`select 1 from app.identities where subject = ${sub}`).toHaveLength(0);
  }

  it("signs nobody in when a sign-in's callback is loaded in another browser, and spends it", async () => {
    const person = journeys.newPerson();
    const started = journeys.browser();
    const callback = await journeys.callbackOf(person.sub, started);
    const refused = await journeys.browser().visit(callback);
    expect(refused.status).toBe(400);
    expect(refused.headers.get("location")).toBeNull();
    expect((await refused.json()).code).toBe("invalid_state");
    expect((await started.visit(callback)).status, "the flow is spent").toBe(400);
    await nobodySignedIn(person.sub);
  });

  it("signs the victim in nowhere when an attacker's start completes in the victim's browser", async () => {
    // The attacker starts a sign-in in their own browser, with their own verifier, and keeps the provider's URL.
    const attackerBrowser = journeys.browser();
    const start = await attackerBrowser.visit(journeys.authorizeUrl({ provider: "local", redirect_to: app }));
    expect(start.status).toBe(302);
    // The victim, signed in at the provider before, is made to open it: no page is shown, the browser comes back.
    const victim = journeys.newPerson();
    const victimBrowser = journeys.browser();
    await journeys.signedIn(victim.sub, victimBrowser);
    const callback = await victimBrowser.signIn(start.headers.get("location")!, victim.sub);
    const atVictim = await victimBrowser.visit(callback);
    expect(atVictim.status).toBe(400);
    expect(atVictim.headers.get("location")).toBeNull();
    // With the URL stolen, the attacker's browser (which holds the cookie) gets nothing either: the flow is spent.
    expect((await attackerBrowser.visit(callback)).status).toBe(400);
    expect(
      await stack.sql`select 1 from app.oauth_codes c join app.identities i on i.id = c.identity_id
                           where i.subject = ${victim.sub}`,
    ).toHaveLength(0);
  });

  it("links nothing when a link's provider step completes in another browser than the one that opened it", async () => {
    const attacker = await journeys.registerWithPassword(uniqueEmail("bound-link-attacker"));
    await journeys.reauthenticated(attacker.accessToken);
    const attackerBrowser = journeys.browser();
    const opened = await attackerBrowser.visit(await linkUrl(attacker.accessToken));
    expect(opened.status, await opened.clone().text()).toBe(302);
    const victim = journeys.newPerson();
    const victimBrowser = journeys.browser();
    const callback = await victimBrowser.signIn(opened.headers.get("location")!, victim.sub);
    expect((await victimBrowser.visit(callback)).status).toBe(400);
    expect((await attackerBrowser.visit(callback)).status).toBe(400);
    expect(await stack.sql`select 1 from app.identity_link_codes where subject = ${victim.sub}`).toHaveLength(0);
    expect((await journeys.identitiesOf(attacker.accessToken)).identities).toEqual([]);
  });

  it("binds a link to the first browser that opens it, once", async () => {
    const owner = await journeys.registerWithPassword(uniqueEmail("bound-link"));
    await journeys.reauthenticated(owner.accessToken);
    const url = await linkUrl(owner.accessToken);
    expect((await journeys.browser().visit(url)).status).toBe(302);
    const second = await journeys.browser().visit(url);
    expect(second.status).toBe(400);
    expect(second.headers.get("location")).toBeNull();
    expect((await second.json()).code).toBe("invalid_state");
  });

  it("sets the binding cookie HttpOnly, SameSite=Lax, for the provider's callback only, and removes it there", async () => {
    const started = await journeys.browser().visit(journeys.authorizeUrl({ provider: "local", redirect_to: app }));
    const [cookie] = started.headers.getSetCookie();
    expect(cookie).toMatch(/^notes_flow_[0-9a-f]{16}=[A-Za-z0-9_-]{43}; /);
    const attributes = cookie.split("; ").slice(1).map((attribute) => attribute.toLowerCase());
    expect(attributes).toEqual(
      expect.arrayContaining([
        "max-age=600",
        "path=/functions/v1/auth/oauth/callback/local",
        "httponly",
        "samesite=lax",
      ]),
    );
    // The stack is served over plain http: a Secure cookie would never come back.
    expect(attributes).not.toContain("secure");
    const browser = journeys.browser();
    const callback = await journeys.callbackOf(journeys.newPerson().sub, browser);
    const back = await browser.visit(callback);
    expect(back.headers.getSetCookie().join()).toMatch(/^notes_flow_[0-9a-f]{16}=; Max-Age=0; Path=/);
  });
});

describe("mix-up (RFC 9700 4.4): a redirect URI per provider", () => {
  it("gives a hostile provider nothing of an honest provider's code when its sign-in is sent there", async () => {
    const person = journeys.newPerson();
    const browser = journeys.browser();
    await journeys.signedIn(person.sub, browser);
    // The victim starts a sign-in with the hostile provider, which sends the browser on to the honest one with the
    // flow's state, challenge and nonce, and the service's client and redirect URI there.
    const started = await browser.visit(journeys.authorizeUrl({ provider: "hostile", redirect_to: app }));
    expect(started.status, await started.clone().text()).toBe(302);
    const atHostile = new URL(started.headers.get("location")!);
    expect(atHostile.origin).toBe(hostile.issuer);
    const forwarded = new URL(`${provider.issuer}/auth`);
    for (const name of ["state", "code_challenge", "code_challenge_method", "nonce", "scope", "response_type"]) {
      forwarded.searchParams.set(name, atHostile.searchParams.get(name)!);
    }
    forwarded.searchParams.set("client_id", provider.clientId);
    forwarded.searchParams.set("redirect_uri", `${stack.baseUrl}/auth/oauth/callback/local`);
    const callback = await browser.signIn(forwarded.href, person.sub);
    const honestCode = callback.searchParams.get("code")!;
    expect(honestCode).toBeTruthy();
    // As a provider that does not send RFC 9207's iss (Google does not) would return it.
    callback.searchParams.delete("iss");
    const answer = await browser.visit(callback);
    expect(answer.status).toBe(400);
    expect(answer.headers.get("location")).toBeNull();
    expect((await answer.json()).code).toBe("invalid_state");
    expect(hostile.tokenRequests().filter((body) => body.includes(honestCode))).toEqual([]);
  });

  it("registers each provider's callback at its own path, which serves no other provider's flow", async () => {
    const started = await journeys.browser().visit(journeys.authorizeUrl({ provider: "hostile", redirect_to: app }));
    expect(new URL(started.headers.get("location")!).searchParams.get("redirect_uri"))
      .toBe(`${stack.baseUrl}/auth/oauth/callback/hostile`);
  });
});

describe("flooding", () => {
  it("counts link starts of one session like sign-in starts, so a session cannot store flows without bound", async () => {
    const owner = await journeys.registerWithPassword(uniqueEmail("flood"));
    await journeys.reauthenticated(owner.accessToken);
    const address = freshAddress();
    const statuses: number[] = [];
    for (let i = 0; i < addressLimit * 3; i++) statuses.push((await startLink(owner.accessToken, {}, address)).status);
    const [{ count }] = await stack.sql<{ count: number }[]>`
      select count(*)::int from app.oauth_flows where link_user_id = ${owner.payload.id}`;
    expect(statuses, "every link start stored a flow").toContain(429);
    expect(count).toBeLessThanOrEqual(addressLimit);
  });

  it("refuses sign-in starts past the address's limit, storing no flow", async () => {
    const address = freshAddress();
    const statuses: number[] = [];
    for (let i = 0; i < addressLimit + 2; i++) {
      statuses.push(
        (await journeys.navigate(journeys.authorizeUrl({ provider: "local", redirect_to: app }), address)).status,
      );
    }
    expect(statuses.slice(0, addressLimit)).toEqual(Array(addressLimit).fill(302));
    expect(statuses.slice(addressLimit)).toEqual([429, 429]);
  });
});

describe("races on the single-use steps", () => {
  it("exchanges one code for exactly one session when it is sent twice at once", async () => {
    const back = await journeys.backToApp(await journeys.callbackOf(journeys.newPerson().sub));
    const code = back.searchParams.get("code")!;
    const answers = await Promise.all([journeys.exchange(code), journeys.exchange(code), journeys.exchange(code)]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400, 400]);
  });

  it("completes a callback once when it arrives twice at once", async () => {
    const callback = await journeys.callbackOf(journeys.newPerson().sub);
    const browser = ProviderBrowser.thatReturned(callback)!;
    const answers = await Promise.all([browser.visit(callback), browser.visit(callback)]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([302, 400]);
  });

  it("leaves a passwordless account one identity when its last two are unlinked at once", async () => {
    const first = journeys.newPerson();
    const { accessToken } = await journeys.signedIn(first.sub);
    await journeys.reauthenticatedAtProvider(accessToken, first.sub);
    const second = journeys.newPerson();
    await linkAs(accessToken, await linkUrl(accessToken), second.sub);
    const { identities, hasPassword } = await journeys.identitiesOf(accessToken);
    expect([identities.length, hasPassword]).toEqual([2, false]);
    const answers = await Promise.all(
      identities.map((identity) =>
        stack.call(`/auth/identities?id=${identity.id}`, { method: "DELETE", token: accessToken })
      ),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    expect((await journeys.identitiesOf(accessToken)).identities).toHaveLength(1);
  });
});

describe("a callback with a valid state", () => {
  it("refuses the provider code of another flow, and the spent state stays spent", async () => {
    const person = journeys.newPerson();
    const one = await journeys.callbackOf(person.sub);
    const other = await journeys.callbackOf(journeys.newPerson().sub);
    const mixed = new URL(one);
    mixed.searchParams.set("code", other.searchParams.get("code")!);
    const back = await journeys.backToApp(mixed, ProviderBrowser.thatReturned(one));
    expect(back.searchParams.get("error")).toBe("provider_error");
    expect(back.searchParams.get("code")).toBeNull();
    expect((await ProviderBrowser.thatReturned(one)!.visit(one)).status).toBe(400);
  });
});

describe("return URLs that try to leave the app", () => {
  it("refuses each, with no redirect and no flow stored", async () => {
    const [{ count: before }] = await stack.sql<{ count: number }[]>`select count(*)::int from app.oauth_flows`;
    for (
      const candidate of [
        "http://127.0.0.1:5173@attacker.example/signed-in",
        "http://attacker.example\\@127.0.0.1:5173/signed-in",
        "http://attacker.example%5C@127.0.0.1:5173/signed-in",
        "//attacker.example/signed-in",
        "/signed-in",
        "http:/attacker.example/signed-in",
        "http://127.0.0.1:5174/signed-in",
        "https://127.0.0.1:5173/signed-in",
        "http://localhost:5173/signed-in",
        "http://127.0.0.1:5173/SIGNED-IN",
        "http://127.0.0.1:5173/signed-in/",
        "http://127.0.0.1:5173/signed-in%2f..%2f..%2fevil",
        "http://127.0.0.1:5173/signed-in/%2e%2e/evil",
        "http://127.0.0.1:5173/signed-in#",
        "http://127.0.0.1:5173/signed-in?x=1#frag",
        "http://user:pw@127.0.0.1:5173/signed-in",
        "javascript://127.0.0.1:5173/signed-in%0aalert(1)",
        "data:text/html,<script>alert(1)</script>",
        `${app}?pad=${"a".repeat(2000)}`,
      ]
    ) {
      const refused = await journeys.navigate(journeys.authorizeUrl({ provider: "local", redirect_to: candidate }));
      expect(refused.status, candidate).toBe(400);
      expect(refused.headers.get("location"), candidate).toBeNull();
    }
    const [{ count: after }] = await stack.sql<{ count: number }[]>`select count(*)::int from app.oauth_flows`;
    expect(after).toBe(before);
  });

  it("refuses every other spelling of a listed URL and any added query (exact matching), storing no flow", async () => {
    const [{ count: before }] = await stack.sql<{ count: number }[]>`select count(*)::int from app.oauth_flows`;
    for (
      const candidate of [
        "http:\\\\127.0.0.1:5173\\signed-in?code=planted&error=access_denied&linked=local",
        "HTTP://127.0.0.1:5173/x/%2E%2E/signed-in?code=planted",
        "http://127.0.0.1.:5173/signed-in",
        "http://127.0.0.1:05173/signed-in",
        "http://:@127.0.0.1:5173/signed-in",
        `${app}?code=planted`,
        `${app}?error=access_denied`,
        `${app}?`,
      ]
    ) {
      const refused = await journeys.navigate(journeys.authorizeUrl({ provider: "local", redirect_to: candidate }));
      expect(refused.status, candidate).toBe(400);
      expect(refused.headers.get("location"), candidate).toBeNull();
    }
    const [{ count: after }] = await stack.sql<{ count: number }[]>`select count(*)::int from app.oauth_flows`;
    expect(after).toBe(before);
  });
});

describe("methods and parameters of the new endpoints", () => {
  it("answers 405 to other methods of authorize, storing no flow", async () => {
    const [{ count: before }] = await stack.sql<{ count: number }[]>`select count(*)::int from app.oauth_flows`;
    for (const method of ["POST", "PUT", "DELETE", "HEAD"]) {
      const refused = await journeys.navigate(
        journeys.authorizeUrl({ provider: "local", redirect_to: app }),
        freshAddress(),
        method,
      );
      expect(refused.status, method).toBe(405);
      expect(refused.headers.get("location"), method).toBeNull();
    }
    const [{ count: after }] = await stack.sql<{ count: number }[]>`select count(*)::int from app.oauth_flows`;
    expect(after).toBe(before);
  });

  it("refuses a duplicated redirect_to or provider", async () => {
    for (
      const query of [
        `provider=local&redirect_to=${encodeURIComponent(app)}&redirect_to=${
          encodeURIComponent("https://attacker.example/")
        }`,
        `provider=local&redirect_to=${encodeURIComponent("https://attacker.example/")}&redirect_to=${
          encodeURIComponent(app)
        }`,
        `provider=local&provider=other&redirect_to=${encodeURIComponent(app)}`,
      ]
    ) {
      const answer = await journeys.navigate(`${stack.baseUrl}/auth/oauth/authorize?${query}`);
      expect(answer.status, query).toBe(400);
      expect(answer.headers.get("location"), query).toBeNull();
    }
  });

  it("refuses a duplicated or unknown parameter of unlink, unlinking nothing", async () => {
    const { accessToken } = await journeys.signedIn(journeys.newPerson().sub);
    const [{ id }] = (await journeys.identitiesOf(accessToken)).identities;
    for (
      const query of [`id=${id}&id=${crypto.randomUUID()}`, `id=${crypto.randomUUID()}&id=${id}`, `id=${id}&force=1`]
    ) {
      const refused = await stack.call(`/auth/identities?${query}`, { method: "DELETE", token: accessToken });
      expect(refused.status, query).toBe(400);
    }
    expect((await journeys.identitiesOf(accessToken)).identities).toHaveLength(1);
  });
});

describe("what leaves the callback", () => {
  it("sets no-referrer and no-store on the redirect, and logs neither the one-time code nor the provider's code", async () => {
    const callback = await journeys.callbackOf(journeys.newPerson().sub);
    const back = await ProviderBrowser.thatReturned(callback)!.visit(callback);
    expect(back.status).toBe(302);
    expect(back.headers.get("referrer-policy")).toBe("no-referrer");
    expect(back.headers.get("cache-control")).toContain("no-store");
    const code = new URL(back.headers.get("location")!).searchParams.get("code")!;
    await journeys.exchange(code);
    const log = readFileSync(stack.logFile, "utf8");
    expect(log.length).toBeGreaterThan(0);
    for (const secret of [code, callback.searchParams.get("code")!, callback.searchParams.get("state")!]) {
      expect(log.includes(secret)).toBe(false);
    }
  });
});

describe("an account with a second factor", () => {
  it("gives a provider sign-in an aal1 session that can neither link, unlink, change nor delete, nor test a password", async () => {
    const email = uniqueEmail("factor");
    const owner = await journeys.registerWithPassword(email);
    const verification = await readMailedCode(email, { kind: "verification", logFile: stack.logFile });
    const verified = await stack.call("/auth/verify-email", {
      token: owner.accessToken,
      body: { email, code: verification },
    });
    expect(verified.status, verified.text).toBe(200);
    const enrolled = await stack.call("/auth/mfa/enroll", { token: owner.accessToken, body: { password } });
    expect(enrolled.status, enrolled.text).toBe(201);
    const { factorId, secret } = enrollment.parse((enrolled.body as { data: unknown }).data);
    const period = totpPolicy.periodSeconds * 1000;
    if (period - (Date.now() % period) < 3_000) await new Promise((resolve) => setTimeout(resolve, 3_100));
    const activated = await stack.call("/auth/mfa/activate", {
      token: owner.accessToken,
      body: { factorId, code: codeAt(secret, Date.now()) },
    });
    expect(activated.status, activated.text).toBe(200);
    const { accessToken: fullToken } = activation.parse((activated.body as { data: unknown }).data);
    const person = journeys.newPerson({ email });
    await journeys.reauthenticated(fullToken);
    await linkAs(fullToken, await linkUrl(fullToken), person.sub);

    const half = await journeys.signedIn(person.sub);
    expect(half.mfaRequired).toBe(true);
    const token = half.accessToken;
    expectErrorCode(await startLink(token), "mfa_required");
    expectErrorCode(await startLink(token, { password: "a wrong guess" }), "mfa_required");
    expectErrorCode(await startLink(token, { password }), "mfa_required");
    expectErrorCode(
      await stack.call("/auth/change-password", { token, body: { newPassword: "another password!" } }),
      "mfa_required",
    );
    expectErrorCode(await stack.call("/auth/delete-account", { token, body: {} }), "mfa_required");
    const [{ id }] = (await journeys.identitiesOf(fullToken)).identities;
    expectErrorCode(await stack.call(`/auth/identities?id=${id}`, { method: "DELETE", token }), "mfa_required");
    expect(await stack.sql`select 1 from app.users where email = ${email}`).toHaveLength(1);
  });
});

describe("suspended accounts and ended sessions", () => {
  it("refuses a suspended account's provider sign-in and a code issued before the suspension", async () => {
    const person = journeys.newPerson();
    const { payload } = await journeys.signedIn(person.sub);
    const back = await journeys.backToApp(await journeys.callbackOf(person.sub));
    const code = back.searchParams.get("code")!;
    await stack.sql`update app.users set status = 'SUSPENDED' where id = ${payload.id}`;
    expectErrorCode(await journeys.exchange(code), "invalid_code");
    const again = await journeys.backToApp(await journeys.callbackOf(person.sub));
    expect(again.searchParams.get("error")).toBe("account_suspended");
    expect(again.searchParams.get("code")).toBeNull();
  });

  it("links nothing when the session that started the link logged out before the callback", async () => {
    const owner = await journeys.registerWithPassword(uniqueEmail("logged-out"));
    await journeys.reauthenticated(owner.accessToken);
    const url = await linkUrl(owner.accessToken);
    const out = await stack.call("/auth/logout", { token: owner.accessToken, body: {} });
    expect(out.status, out.text).toBe(200);
    const person = journeys.newPerson();
    const back = await journeys.backToApp(await new ProviderBrowser().signIn(url, person.sub));
    expect(back.searchParams.get("error")).toBe("link_expired");
    expect(await stack.sql`select 1 from app.identities where subject = ${person.sub}`).toHaveLength(0);
  });

  it("does not extend a proof's 5 minutes by a refresh", async () => {
    const person = journeys.newPerson();
    const { accessToken, refreshToken } = await journeys.signedIn(person.sub);
    await journeys.reauthenticatedAtProvider(accessToken, person.sub);
    await stack.sql`update app.sessions set reauthenticated_at = now() - interval '6 minutes'
                    where id = ${sessionIdOf(accessToken)}`;
    const refreshed = await stack.call("/auth/refresh", {
      body: { refreshToken },
      headers: { "x-forwarded-for": freshAddress() },
    });
    expect(refreshed.status, refreshed.text).toBe(200);
    const { accessToken: newToken } = sessionEnvelope.parse(refreshed.body).data;
    expectErrorCode(await stack.call("/auth/delete-account", { token: newToken, body: {} }), "invalid_request");
    expectErrorCode(await startLink(newToken), "invalid_request");
  });
});
