/**
 * Sign-in with an OpenID Connect provider, as a person in a browser meets it
 * and as an attacker replays or forges it: against a real provider
 * (`oidc-provider`, dev/harness/identity-provider.ts) whose sign-in pages the test
 * drives, on a stack of its own configured with it. Nothing in the flow is
 * mocked on the service's side: it discovers the provider, redirects to it,
 * exchanges the code with PKCE and checks the signed ID token.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { identity, identityLinkStart, session } from "../supabase/functions/_shared/contract/mod.ts";
import { sessionEnvelope } from "./support/auth.ts";
import { freshAddress, readResetCode, uniqueEmail } from "./support/api.ts";
import { expectErrorCode } from "./support/error-codes.ts";
import { type IdentityProvider, identityProviderForStack, ProviderBrowser } from "../dev/harness/identity-provider.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";
import { journeyPassword, newPkce, ProviderJourneys } from "./support/provider-journeys.ts";
import { freePort } from "../dev/harness/free-port.ts";

let stack: ScratchStack;
let provider: IdentityProvider;
let journeys: ProviderJourneys;
const app = "http://127.0.0.1:5173/signed-in";
/** A return URL listed with a query of the app's own. */
const appWithQuery = `${app}?next=%2Fnotes`;
const password = journeyPassword;

beforeAll(async () => {
  let env: Record<string, string>;
  ({ provider, env } = await identityProviderForStack([app, "http://127.0.0.1:5173/settings", appWithQuery]));
  stack = await startScratchStack("provider_sign_in", {
    env: {
      ...env,
      BCRYPT_COST: "4",
      TRUST_PROXY: "true",
      // "offline" is configured too, but nothing answers at its issuer.
      OIDC_PROVIDERS: "local,offline",
      OIDC_OFFLINE_ISSUER: `http://127.0.0.1:${await freePort()}`,
      OIDC_OFFLINE_CLIENT_ID: "offline-client",
      OIDC_OFFLINE_CLIENT_SECRET: "offline-secret",
    },
  });
  journeys = new ProviderJourneys(stack, provider, app);
});

afterAll(async () => {
  await stack?.stop();
  await provider?.stop();
});

describe("a new person signs in with a provider", () => {
  it("gets an account of the provider's name and verified address, reaches notes, and the same account next time", async () => {
    const person = journeys.newPerson({ name: "Grace Hopper" });
    const browser = new ProviderBrowser();
    const back = await journeys.signInAtProvider(person.sub, browser);
    expect(back.origin + back.pathname).toBe(app);
    expect([...back.searchParams.keys()], "only the one-time code travels in the URL").toEqual(["code"]);
    const first = await journeys.exchange(back.searchParams.get("code")!);
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
    const again = await journeys.signInAtProvider(person.sub, browser);
    const second = sessionEnvelope.parse((await journeys.exchange(again.searchParams.get("code")!)).body).data;
    expect(second.payload.id).toBe(payload.id);
    const [{ count }] = await stack.sql`select count(*)::int from app.users where email = ${person.email}`;
    expect(count).toBe(1);
  });

  it("gets an unverified account when the provider does not vouch for the address", async () => {
    const person = journeys.newPerson({ verified: false });
    const { payload } = await journeys.signedIn(person.sub);
    expect(payload.isVerified).toBe(false);
  });

  it("takes the address's local part as the name when the provider gives none", async () => {
    const sub = `nameless-${crypto.randomUUID()}`;
    const email = uniqueEmail("nameless");
    provider.setAccount({ sub, email, email_verified: true });
    const { payload } = await journeys.signedIn(sub);
    expect(payload.name).toBe(email.split("@")[0]);
  });

  it("is signed in by its identity even after the provider's address changed", async () => {
    const person = journeys.newPerson();
    const { payload } = await journeys.signedIn(person.sub);
    provider.setAccount({ sub: person.sub, email: uniqueEmail("moved"), email_verified: true });
    expect((await journeys.signedIn(person.sub)).payload.id).toBe(payload.id);
  });
});

describe("the one-time code and the callback are single use", () => {
  it("refuses the code the second time", async () => {
    const back = await journeys.signInAtProvider(journeys.newPerson().sub);
    const code = back.searchParams.get("code")!;
    expect((await journeys.exchange(code)).status).toBe(200);
    expectErrorCode(await journeys.exchange(code), "invalid_code");
  });

  it("refuses a code after its 60 seconds", async () => {
    const back = await journeys.signInAtProvider(journeys.newPerson().sub);
    await stack.sql`update app.oauth_codes set expires_at = now() - interval '1 second'`;
    expectErrorCode(await journeys.exchange(back.searchParams.get("code")!), "invalid_code");
  });

  it("refuses a replayed callback and a forged state, with no redirect", async () => {
    const browser = journeys.browser();
    const callback = await journeys.callbackOf(journeys.newPerson().sub, browser);
    const forged = new URL(callback);
    forged.searchParams.set("state", "forged-state-of-an-attacker");
    const refused = await journeys.navigate(forged);
    expect(refused.status).toBe(400);
    expect(refused.headers.get("location")).toBeNull();
    expect((await refused.json()).code).toBe("invalid_state");

    expect((await browser.visit(callback)).status).toBe(302);
    const replayed = await browser.visit(callback);
    expect(replayed.status).toBe(400);
    expect(replayed.headers.get("location")).toBeNull();
    expect((await replayed.json()).code).toBe("invalid_state");
  });

  it("takes the parameters a provider adds to its callback (Google's scope, authuser, prompt)", async () => {
    const callback = await journeys.callbackOf(journeys.newPerson().sub);
    callback.searchParams.set("scope", "openid email profile");
    callback.searchParams.set("authuser", "0");
    callback.searchParams.set("prompt", "consent");
    expect((await journeys.backToApp(callback)).searchParams.get("code")).toBeTruthy();
  });

  it("sends the app an error, and no code, when the person cancels at the provider", async () => {
    const browser = journeys.browser();
    const start = journeys.authorizeUrl({ provider: "local", redirect_to: app });
    const callback = await browser.signIn(start, journeys.newPerson().sub, { abort: true });
    const back = await journeys.backToApp(callback, browser);
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.get("code")).toBeNull();
  });
});

describe("the app's own PKCE, required", () => {
  async function codeFor(sub: string, query: Record<string, string>): Promise<string> {
    const back = await journeys.backToApp(await journeys.callbackOf(sub, journeys.browser(), app, query));
    return back.searchParams.get("code")!;
  }

  it("exchanges the code only with the verifier of the challenge the sign-in started with", async () => {
    const person = journeys.newPerson();
    const mine = newPkce();
    const bound = { code_challenge: mine.challenge };
    expectErrorCode(await journeys.exchange(await codeFor(person.sub, bound), newPkce().verifier), "invalid_code");
    // A wrong verifier spends the code: the right one cannot follow it.
    const guessed = await codeFor(person.sub, bound);
    expectErrorCode(await journeys.exchange(guessed, newPkce().verifier), "invalid_code");
    expectErrorCode(await journeys.exchange(guessed, mine.verifier), "invalid_code");
    const answered = await journeys.exchange(await codeFor(person.sub, bound), mine.verifier);
    expect(answered.status, answered.text).toBe(200);
  });

  it("refuses a start without code_challenge or with a method other than S256, storing no flow", async () => {
    const [{ count: before }] = await stack.sql<{ count: number }[]>`select count(*)::int from app.oauth_flows`;
    for (
      const [query, field] of [
        [`provider=local&redirect_to=${encodeURIComponent(app)}`, "code_challenge"],
        [`provider=local&redirect_to=${encodeURIComponent(app)}&code_challenge_method=S256`, "code_challenge"],
        [`provider=local&redirect_to=${encodeURIComponent(app)}&code_challenge=${newPkce().challenge}`, undefined],
        [
          `provider=local&redirect_to=${encodeURIComponent(app)}&code_challenge=${"a".repeat(43)}` +
          "&code_challenge_method=plain",
          "code_challenge_method",
        ],
      ] as const
    ) {
      const refused = await journeys.navigate(`${stack.baseUrl}/auth/oauth/authorize?${query}`);
      expect(refused.status, query).toBe(400);
      expect(refused.headers.get("location"), query).toBeNull();
      const body = await refused.json();
      expect(body.code, query).toBe("invalid_request");
      if (field) expect(body.fields.map((problem: { field: string }) => problem.field), query).toContain(field);
    }
    const [{ count: after }] = await stack.sql<{ count: number }[]>`select count(*)::int from app.oauth_flows`;
    expect(after).toBe(before);
  });

  it("refuses an exchange without the codeVerifier, and the code still works with it", async () => {
    const code = await codeFor(journeys.newPerson().sub, {});
    const missing = await stack.call("/auth/oauth/token", { body: { code } });
    expectErrorCode(missing, "invalid_request");
    expect((missing.body as { fields: { field: string }[] }).fields[0].field).toBe("codeVerifier");
    expect((await journeys.exchange(code)).status).toBe(200);
  });

  it("keeps no code without a challenge in the database", async () => {
    const person = journeys.newPerson();
    await journeys.signInAtProvider(person.sub);
    await expect(
      stack.sql`update app.oauth_codes set app_code_challenge = null where user_id in
                (select user_id from app.identities where subject = ${person.sub})`,
    ).rejects.toThrow(/null/);
  });
});

describe("the ID token", () => {
  it("is refused when it was altered on its way from the provider, and no account is made", async () => {
    const person = journeys.newPerson();
    // The payload says another address; the signature is still the provider's, over the original payload.
    provider.alterIdTokens((idToken) => {
      const [header, payload, signature] = idToken.split(".");
      const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
      const forged = Buffer.from(JSON.stringify({ ...claims, email: "victim@example.com" })).toString("base64url");
      return [header, forged, signature].join(".");
    });
    try {
      const back = await journeys.signInAtProvider(person.sub);
      expect(back.searchParams.get("error")).toBe("provider_error");
      expect(back.searchParams.get("code")).toBeNull();
    } finally {
      provider.alterIdTokens(undefined);
    }
    expect(await stack.sql`select 1 from app.identities where subject = ${person.sub}`).toHaveLength(0);
  });
});

describe("claims the ID token leaves to UserInfo (oidc-provider's default conformIdTokenClaims)", () => {
  it("reads the address and name from UserInfo when the ID token carries only sub", async () => {
    const person = journeys.newPerson({ name: "Katherine Johnson" });
    let idTokenClaims: Record<string, unknown> = {};
    provider.reissueIdTokens((claims) => (idTokenClaims = claims));
    try {
      const { payload } = await journeys.signedIn(person.sub);
      expect(payload).toMatchObject({ email: person.email, name: "Katherine Johnson", isVerified: true });
    } finally {
      provider.reissueIdTokens(undefined);
    }
    expect(idTokenClaims.sub).toBe(person.sub);
    expect(idTokenClaims, "the provider's ID token left the email to UserInfo").not.toHaveProperty("email");
  });

  it("refuses UserInfo of another subject than the ID token's, and makes no account", async () => {
    const person = journeys.newPerson();
    const other = journeys.newPerson();
    // A validly signed ID token of one subject, with the access token (and so UserInfo) of another.
    provider.reissueIdTokens((claims) => ({ ...claims, sub: other.sub }));
    try {
      const back = await journeys.signInAtProvider(person.sub);
      expect(back.searchParams.get("error")).toBe("provider_error");
      expect(back.searchParams.get("code")).toBeNull();
    } finally {
      provider.reissueIdTokens(undefined);
    }
    expect(await stack.sql`select 1 from app.identities where subject in (${person.sub}, ${other.sub})`)
      .toHaveLength(0);
  });
});

describe("provider data no account can hold", () => {
  async function refused(sub: string) {
    const back = await journeys.signInAtProvider(sub);
    expect(back.searchParams.get("error"), back.href).toBe("provider_error");
    expect(back.searchParams.get("code")).toBeNull();
  }

  it("refuses a sub over 255 characters cleanly", async () => {
    const sub = `long-${"s".repeat(300)}`;
    provider.setAccount({ sub, email: uniqueEmail("long-sub"), email_verified: true, name: "Long" });
    await refused(sub);
    expect(await stack.sql`select 1 from app.users where name = 'Long'`).toHaveLength(0);
  });

  it("refuses a name with NUL cleanly", async () => {
    const person = journeys.newPerson({ name: "Nul\u0000Name" });
    await refused(person.sub);
    expect(await stack.sql`select 1 from app.users where email = ${person.email}`).toHaveLength(0);
  });

  it("refuses an ID token issued a day in the future, and accepts one within the clock skew", async () => {
    const person = journeys.newPerson();
    provider.reissueIdTokens((claims) => ({ ...claims, iat: Math.floor(Date.now() / 1000) + 86_400 }));
    try {
      await refused(person.sub);
      provider.reissueIdTokens((claims) => ({ ...claims, iat: Math.floor(Date.now() / 1000) + 20 }));
      expect((await journeys.signedIn(person.sub)).payload.email).toBe(person.email);
    } finally {
      provider.reissueIdTokens(undefined);
    }
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
      const refused = await journeys.navigate(journeys.authorizeUrl(query));
      expect(refused.status, JSON.stringify(query)).toBe(400);
      expect(refused.headers.get("location")).toBeNull();
      const body = await refused.json();
      expect(body).toMatchObject({ statusCode: 400, code: "invalid_request" });
      expect(body.fields[0].field).toBe(field);
    }
  });

  it("answers 503, with no redirect, while a provider cannot be reached", async () => {
    const refused = await journeys.navigate(journeys.authorizeUrl({ provider: "offline", redirect_to: app }));
    expect(refused.status).toBe(503);
    expect(refused.headers.get("location")).toBeNull();
    expect((await refused.json()).code).toBe("service_unavailable");
  });

  it("refuses an unknown parameter of the authorize URL", async () => {
    const refused = await journeys.navigate(
      `${journeys.authorizeUrl({ provider: "local", redirect_to: app })}&prompt=none`,
    );
    expect(refused.status).toBe(400);
  });

  it("keeps the query of a return URL listed with one", async () => {
    const back = await journeys.signInAtProvider(journeys.newPerson().sub, new ProviderBrowser(), appWithQuery);
    expect(back.searchParams.get("next")).toBe("/notes");
    expect(back.searchParams.get("code")).toBeTruthy();
  });

  it("refuses a listed return URL with a query added or changed (exact matching), storing no flow", async () => {
    const [{ count: before }] = await stack.sql<{ count: number }[]>`select count(*)::int from app.oauth_flows`;
    for (const candidate of [`${app}/?next=%2Fnotes`, `${app}?x=1`, `${appWithQuery}&x=1`]) {
      const refused = await journeys.navigate(journeys.authorizeUrl({ provider: "local", redirect_to: candidate }));
      expect(refused.status, candidate).toBe(400);
      expect(refused.headers.get("location"), candidate).toBeNull();
      expect((await refused.json()).fields[0].field, candidate).toBe("redirect_to");
    }
    const refusedWithQuery = await journeys.navigate(
      journeys.authorizeUrl({ provider: "local", redirect_to: `${app}?next=%2Fadmin` }),
    );
    expect(refusedWithQuery.status).toBe(400);
    const [{ count: after }] = await stack.sql<{ count: number }[]>`select count(*)::int from app.oauth_flows`;
    expect(after).toBe(before);
  });
});

describe("an address an account already holds", () => {
  it("is answered identity_not_linked, and nothing is created or linked", async () => {
    const email = uniqueEmail("taken");
    const owner = await journeys.registerWithPassword(email);
    const person = journeys.newPerson({ email });
    const back = await journeys.signInAtProvider(person.sub);
    expect(back.searchParams.get("error")).toBe("identity_not_linked");
    expect(back.searchParams.get("code")).toBeNull();
    const identities = await stack.sql`select 1 from app.identities where subject = ${person.sub}`;
    expect(identities).toHaveLength(0);
    expect((await journeys.identitiesOf(owner.accessToken)).identities).toEqual([]);
  });
});

describe("an anonymous account signing up with a provider (the link flow)", () => {
  /** A visitor's anonymous session on the stack, with one note written. */
  async function visitorWithNote(title: string) {
    const started = await stack.call("/auth/anonymous", { method: "POST" });
    expect(started.status, started.text).toBe(201);
    const visitor = sessionEnvelope.parse(started.body).data;
    const note = await stack.call("/notes-create", { token: visitor.accessToken, body: { title } });
    expect(note.status, note.text).toBe(201);
    return visitor;
  }

  /** The link flow run by `accessToken`'s session as `sub` at the provider: the app URL it comes back to. */
  async function linkAsVisitor(accessToken: string, sub: string): Promise<URL> {
    const started = await stack.call("/auth/identities/link", {
      token: accessToken,
      body: { provider: "local", redirectTo: app },
    });
    expect(started.status, started.text).toBe(200);
    const { url } = identityLinkStart.parse((started.body as { data: unknown }).data);
    return await journeys.backToApp(await new ProviderBrowser().signIn(url, sub));
  }

  const titlesOf = async (accessToken: string) =>
    ((await stack.call("/notes-fetch", { token: accessToken })).body as { data: { notes: { title: string }[] } })
      .data.notes.map((note) => note.title);

  it("needs no password, keeps the id and every note, and takes the identity's address and name", async () => {
    const visitor = await visitorWithNote("before the provider");
    const email = uniqueEmail("visitor-provider");
    const person = journeys.newPerson({ email, name: "Vera Provider" });
    const back = await linkAsVisitor(visitor.accessToken, person.sub);
    expect([...back.searchParams.keys()]).toEqual(["link_code"]);
    const completed = await journeys.completeLink(visitor.accessToken, back);
    expect(completed.status, completed.text).toBe(200);

    // The anonymous session goes on as the real account.
    const user = await stack.call("/auth/user", { token: visitor.accessToken });
    expect(user.body).toMatchObject({
      data: {
        payload: { id: visitor.payload.id, email, name: "Vera Provider", isAnonymous: false, isVerified: true },
      },
    });
    expect(await titlesOf(visitor.accessToken)).toEqual(["before the provider"]);
    // The provider now signs in to it, and finds the note.
    const signedIn = await journeys.signedIn(person.sub);
    expect(signedIn.payload.id).toBe(visitor.payload.id);
    expect(await titlesOf(signedIn.accessToken)).toEqual(["before the provider"]);
    expect((await journeys.identitiesOf(signedIn.accessToken)).identities).toMatchObject([{
      provider: "local",
      email,
    }]);
  });

  it("refuses an identity whose address has an account, and the visitor stays as it was", async () => {
    const visitor = await visitorWithNote("still anonymous");
    const owner = await journeys.registerWithPassword(uniqueEmail("visitor-taken"));
    const taken = await linkAsVisitor(visitor.accessToken, journeys.newPerson({ email: owner.payload.email }).sub);
    expect(taken.searchParams.get("error")).toBe("identity_not_linked");

    const user = await stack.call("/auth/user", { token: visitor.accessToken });
    expect(user.body).toMatchObject({ data: { payload: { id: visitor.payload.id, email: "", isAnonymous: true } } });
    expect(await titlesOf(visitor.accessToken)).toEqual(["still anonymous"]);
    expect((await journeys.identitiesOf(owner.accessToken)).identities).toEqual([]);
  });

  it("refuses an address registered between the provider and the completion, changing nothing", async () => {
    const visitor = await visitorWithNote("kept through a race");
    const email = uniqueEmail("visitor-raced");
    const back = await linkAsVisitor(visitor.accessToken, journeys.newPerson({ email }).sub);
    await journeys.registerWithPassword(email);
    const completed = await journeys.completeLink(visitor.accessToken, back);
    expect(completed.status, completed.text).toBe(409);
    expectErrorCode(completed, "email_taken");
    const user = await stack.call("/auth/user", { token: visitor.accessToken });
    expect(user.body).toMatchObject({ data: { payload: { email: "", isAnonymous: true } } });
    expect(await titlesOf(visitor.accessToken)).toEqual(["kept through a race"]);
  });
});

describe("linking and unlinking", () => {
  it("links from a fresh session, and the provider then signs in to that account", async () => {
    const email = uniqueEmail("linker");
    const owner = await journeys.registerWithPassword(email);
    const person = journeys.newPerson({ email });
    await journeys.reauthenticated(owner.accessToken);
    const started = await stack.call("/auth/identities/link", {
      token: owner.accessToken,
      body: { provider: "local", redirectTo: "http://127.0.0.1:5173/settings" },
    });
    expect(started.status, started.text).toBe(200);
    const { url } = identityLinkStart.parse((started.body as { data: unknown }).data);
    const back = await journeys.backToApp(await new ProviderBrowser().signIn(url, person.sub));
    expect(back.pathname).toBe("/settings");
    expect([...back.searchParams.keys()]).toEqual(["link_code"]);
    const completed = await journeys.completeLink(owner.accessToken, back);
    expect(completed.status, completed.text).toBe(200);
    expect(identity.parse((completed.body as { data: unknown }).data)).toMatchObject({ provider: "local", email });

    const { identities, hasPassword } = await journeys.identitiesOf(owner.accessToken);
    expect(hasPassword).toBe(true);
    expect(identities).toMatchObject([{ provider: "local", email }]);
    expect((await journeys.signedIn(person.sub)).payload.id).toBe(owner.payload.id);
  });

  it("asks for the password of a session however fresh, unless it gave a proof within 5 minutes", async () => {
    const owner = await journeys.registerWithPassword(uniqueEmail("stale"));
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
    await journeys.reauthenticated(owner.accessToken);
    expect((await link({})).status).toBe(200);
  });

  it("links only for the session that asked: a link URL opened in another browser links nothing", async () => {
    const asking = await journeys.registerWithPassword(uniqueEmail("asking"));
    await journeys.reauthenticated(asking.accessToken);
    const started = await stack.call("/auth/identities/link", {
      token: asking.accessToken,
      body: { provider: "local", redirectTo: app },
    });
    const { url } = identityLinkStart.parse((started.body as { data: unknown }).data);
    // Someone else, signed in to the app in their own browser, is made to open the URL.
    const someoneElse = await journeys.registerWithPassword(uniqueEmail("someone"));
    const back = await journeys.backToApp(await new ProviderBrowser().signIn(url, journeys.newPerson().sub));
    expectErrorCode(await journeys.completeLink(someoneElse.accessToken, back), "invalid_code");
    // The code is spent: not even the asking session can use it now.
    expectErrorCode(await journeys.completeLink(asking.accessToken, back), "invalid_code");
    expect((await journeys.identitiesOf(asking.accessToken)).identities).toEqual([]);
    expect((await journeys.identitiesOf(someoneElse.accessToken)).identities).toEqual([]);
  });

  it("refuses an identity that belongs to another account", async () => {
    const person = journeys.newPerson();
    await journeys.signedIn(person.sub);
    const other = await journeys.registerWithPassword(uniqueEmail("other"));
    await journeys.reauthenticated(other.accessToken);
    const started = await stack.call("/auth/identities/link", {
      token: other.accessToken,
      body: { provider: "local", redirectTo: app },
    });
    const { url } = identityLinkStart.parse((started.body as { data: unknown }).data);
    const back = await journeys.backToApp(await new ProviderBrowser().signIn(url, person.sub));
    expect(back.searchParams.get("error")).toBe("identity_already_linked");
    expect((await journeys.identitiesOf(other.accessToken)).identities).toEqual([]);
  });

  it("refuses to unlink the last way to sign in, and unlinks once a password is set", async () => {
    const person = journeys.newPerson();
    const { accessToken } = await journeys.signedIn(person.sub);
    const { identities, hasPassword } = await journeys.identitiesOf(accessToken);
    expect(hasPassword).toBe(false);
    const unlink = (token: string) =>
      stack.call(`/auth/identities?id=${identities[0].id}`, { method: "DELETE", token });
    expectErrorCode(await unlink(accessToken), "reauthentication_required");
    await journeys.reauthenticatedAtProvider(accessToken, person.sub);
    expectErrorCode(await unlink(accessToken), "last_sign_in_method");

    // A sign-in at the provider made for it stands in for the password the account does not have.
    const changed = await stack.call("/auth/change-password", {
      token: accessToken,
      body: { newPassword: password },
    });
    expect(changed.status, changed.text).toBe(200);
    const { accessToken: newToken } = sessionEnvelope.parse(changed.body).data;
    // The new session has given no proof of its own yet.
    expectErrorCode(await unlink(newToken), "reauthentication_required");
    await journeys.reauthenticated(newToken);
    const removed = await unlink(newToken);
    expect(removed.status, removed.text).toBe(200);
    expect((await journeys.identitiesOf(newToken)).identities).toEqual([]);
    expectErrorCode(await unlink(newToken), "identity_not_found");
  });
});

describe("an account without a password", () => {
  it("cannot log in with any password", async () => {
    const person = journeys.newPerson();
    await journeys.signedIn(person.sub);
    for (const guess of [password, "", "null", "undefined"]) {
      const response = await stack.call("/auth/login", {
        body: { email: person.email, password: guess || "x" },
        headers: { "x-forwarded-for": freshAddress() },
      });
      expectErrorCode(response, guess === "" ? "invalid_credentials" : "invalid_credentials");
    }
  });

  it("changes or deletes only after a sign-in at the provider made for it, never with a session however fresh", async () => {
    const person = journeys.newPerson();
    const { accessToken, payload } = await journeys.signedIn(person.sub);
    expectErrorCode(
      await stack.call("/auth/change-password", { token: accessToken, body: { newPassword: password } }),
      "invalid_request",
    );
    expectErrorCode(await stack.call("/auth/delete-account", { token: accessToken, body: {} }), "invalid_request");

    await journeys.reauthenticatedAtProvider(accessToken, person.sub);
    const deleted = await stack.call("/auth/delete-account", { token: accessToken, body: {} });
    expect(deleted.status, deleted.text).toBe(200);
    expect(await stack.sql`select 1 from app.users where id = ${payload.id}`).toHaveLength(0);
  });

  it("takes as a proof only a new sign-in, at the provider, of one of the account's own identities", async () => {
    const person = journeys.newPerson();
    const browser = journeys.browser();
    const { accessToken } = await journeys.signedIn(person.sub, browser);
    // The provider holds a session in this browser; a proof still asks for its login page (prompt=login): cancelled
    // there, nothing is proved.
    const started = await stack.call("/auth/reauthenticate/provider", {
      token: accessToken,
      body: { provider: "local", redirectTo: app },
    });
    const { url } = (started.body as { data: { url: string } }).data;
    // Through this service first, which binds the flow to the browser, then to the provider asking for a new login.
    const atProvider = (await browser.visit(url)).headers.get("location") ?? "";
    expect(Object.fromEntries(new URL(atProvider).searchParams)).toMatchObject({ prompt: "login", max_age: "0" });
    const cancelled = await journeys.backToApp(await browser.signIn(atProvider, person.sub, { abort: true }), browser);
    expect(cancelled.searchParams.get("error")).toBe("access_denied");
    // Someone else's identity at the provider proves nothing for this account.
    const stranger = journeys.newPerson();
    await journeys.signedIn(stranger.sub);
    const other = await journeys.reauthenticateAtProvider(accessToken, stranger.sub);
    expect(other.searchParams.get("error")).toBe("identity_not_linked");
    expectErrorCode(await stack.call("/auth/delete-account", { token: accessToken, body: {} }), "invalid_request");
    // A provider the account has no identity of is refused at the start.
    const password_account = await journeys.registerWithPassword(uniqueEmail("no-identity"));
    const refused = await stack.call("/auth/reauthenticate/provider", {
      token: password_account.accessToken,
      body: { provider: "local", redirectTo: app },
    });
    expectErrorCode(refused, "identity_not_found");
  });

  it("a password session never stands in for the password", async () => {
    const owner = await journeys.registerWithPassword(uniqueEmail("pw"));
    expectErrorCode(
      await stack.call("/auth/delete-account", { token: owner.accessToken, body: {} }),
      "invalid_request",
    );
  });
});

describe("the security log and the mail", () => {
  it("records the sign-up, each sign-in, the link and the unlink, and mails the link", async () => {
    const email = uniqueEmail("events");
    const owner = await journeys.registerWithPassword(email);
    const person = journeys.newPerson({ email });
    await journeys.reauthenticated(owner.accessToken);
    const started = await stack.call("/auth/identities/link", {
      token: owner.accessToken,
      body: { provider: "local", redirectTo: app },
    });
    const { url } = identityLinkStart.parse((started.body as { data: unknown }).data);
    expect(
      (await journeys.completeLink(
        owner.accessToken,
        await journeys.backToApp(await new ProviderBrowser().signIn(url, person.sub)),
      )).status,
    )
      .toBe(200);
    const { accessToken } = await journeys.signedIn(person.sub);
    const [identity] = (await journeys.identitiesOf(accessToken)).identities;
    await journeys.reauthenticated(accessToken);
    const unlinked = await stack.call(`/auth/identities?id=${identity.id}`, { method: "DELETE", token: accessToken });
    expect(unlinked.status, unlinked.text).toBe(200);

    const events = await stack.sql<{ type: string; details: Record<string, string> }[]>`
      select type, details from app.security_events
      where user_id = ${owner.payload.id} and type <> 'session_started' order by id`;
    expect(events.map((event) => event.type)).toEqual([
      "registered",
      "reauthenticated",
      "identity_linked",
      "login_succeeded",
      "reauthenticated",
      "identity_unlinked",
    ]);
    expect(events[3].details.provider).toBe("local");
    const mails = await stack.sql`select subject from app.mail_outbox where recipient = ${email}`;
    expect(mails.map((mail) => mail.subject)).toContain("A sign-in method was added to your account");
    expect(mails.map((mail) => mail.subject)).toContain("A sign-in was removed from your account");

    const newcomer = journeys.newPerson();
    const { payload } = await journeys.signedIn(newcomer.sub);
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
    const person = journeys.newPerson({ verified: false });
    const { payload } = await journeys.signedIn(person.sub);
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
    expect(dropped.details).toMatchObject({ provider: "local", reason: "account_reclaimed" });
    const back = await journeys.signInAtProvider(person.sub);
    expect(back.searchParams.get("error"), "the address is the owner's now").toBe("identity_not_linked");
  });
});

describe("LOCAL_IDENTITY_PROVIDER=true", () => {
  it("runs a local provider as `local` at which any name signs in, as a developer tries it", async () => {
    const local = await startScratchStack("local_provider", {
      env: { BCRYPT_COST: "4", LOCAL_IDENTITY_PROVIDER: "true" },
    });
    try {
      const pkce = newPkce();
      const browser = new ProviderBrowser();
      const start = `${local.baseUrl}/auth/oauth/authorize?${new URLSearchParams({
        provider: "local",
        redirect_to: "http://127.0.0.1:5173/",
        code_challenge: pkce.challenge,
        code_challenge_method: "S256",
      })}`;
      const callback = await browser.signIn(start, "Grace");
      const back = await browser.visit(callback);
      const code = new URL(back.headers.get("location")!).searchParams.get("code");
      const signedIn = await local.call("/auth/oauth/token", { body: { code, codeVerifier: pkce.verifier } });
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
