/**
 * A person's trips through provider sign-in, as a browser makes them against
 * a stack configured with a real provider as `local`
 * (`identityProviderForStack`): starting at the service, signing in at the
 * provider's pages, coming back to the app, and what the app then calls.
 * Redirects are never followed, so each step's answer can be checked. Each
 * journey's browser is a `ProviderBrowser`, whose cookie jar carries the
 * cookie that binds a flow to the browser that started it; the app keeps one
 * PKCE verifier, whose challenge every start sends unless told otherwise.
 */
import { createHash, randomBytes } from "node:crypto";
import { expect } from "vitest";
import { identityList } from "../../supabase/functions/_shared/contract/mod.ts";
import type { IdentityProvider } from "../../dev/harness/identity-provider.ts";
import { ProviderBrowser } from "../../dev/harness/identity-provider.ts";
import { freshAddress, uniqueEmail } from "./api.ts";
import { sessionEnvelope } from "./auth.ts";
import type { ScratchStack } from "./scratch-stack.ts";

export const journeyPassword = "correct horse battery";

/** A PKCE verifier (RFC 7636) and its S256 challenge, as an app makes them. */
export function newPkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

export class ProviderJourneys {
  /** The app's PKCE pair: its challenge goes with every start, its verifier with every exchange, unless given. */
  readonly pkce = newPkce();

  constructor(readonly stack: ScratchStack, readonly provider: IdentityProvider, readonly app: string) {}

  /** A new browser, at an address of its own. */
  browser(): ProviderBrowser {
    return new ProviderBrowser({ headers: { "x-forwarded-for": freshAddress() } });
  }

  /** A person at the provider with a new subject and (unless given) address. */
  newPerson(options: { email?: string; verified?: boolean; name?: string } = {}) {
    const sub = `person-${crypto.randomUUID()}`;
    const email = options.email ?? uniqueEmail("provider");
    this.provider.setAccount({
      sub,
      email,
      email_verified: options.verified ?? true,
      name: options.name ?? "Ada Provider",
    });
    return { sub, email };
  }

  /** A browser navigation to the service with no cookie: no apikey, redirects not followed, from `address`. */
  navigate(url: string | URL, address = freshAddress(), method = "GET"): Promise<Response> {
    return fetch(url, { method, redirect: "manual", headers: { "x-forwarded-for": address } });
  }

  /** The start of a sign-in, with the app's PKCE challenge unless `query` names its own. */
  authorizeUrl(query: Record<string, string>): string {
    const pkce = { code_challenge: this.pkce.challenge, code_challenge_method: "S256" };
    return `${this.stack.baseUrl}/auth/oauth/authorize?${new URLSearchParams({ ...pkce, ...query })}`;
  }

  /**
   * Starts a sign-in in `browser` and goes through the provider as `sub`: the callback's URL at the service, not yet
   * fetched.
   */
  async callbackOf(
    sub: string,
    browser = this.browser(),
    redirectTo = this.app,
    query: Record<string, string> = {},
  ): Promise<URL> {
    const callback = await browser.signIn(
      this.authorizeUrl({ provider: "local", redirect_to: redirectTo, ...query }),
      sub,
    );
    expect(callback.href.startsWith(`${this.stack.baseUrl}/auth/oauth/callback/local?`), callback.href).toBe(true);
    return callback;
  }

  /**
   * Loads the callback in `browser` (by default the one that came back with it): where the service sends the
   * browser back to in the app.
   */
  async backToApp(callback: URL, browser = ProviderBrowser.thatReturned(callback) ?? this.browser()): Promise<URL> {
    const back = await browser.visit(callback);
    expect(back.status, await back.clone().text()).toBe(302);
    return new URL(back.headers.get("location")!);
  }

  /** The whole journey of a sign-in: the app URL the browser comes back to. */
  async signInAtProvider(sub: string, browser = this.browser(), redirectTo = this.app): Promise<URL> {
    return await this.backToApp(await this.callbackOf(sub, browser, redirectTo), browser);
  }

  /** The app exchanges a one-time code with its verifier (the app's own unless given). */
  exchange(code: string, codeVerifier = this.pkce.verifier) {
    return this.stack.call("/auth/oauth/token", {
      body: { code, codeVerifier },
      headers: { "x-forwarded-for": freshAddress() },
    });
  }

  /** Signs `sub` in through the provider: the session the app gets. */
  async signedIn(sub: string, browser = this.browser()) {
    const back = await this.signInAtProvider(sub, browser);
    expect(back.searchParams.get("error"), back.href).toBeNull();
    const response = await this.exchange(back.searchParams.get("code")!);
    expect(response.status, response.text).toBe(200);
    return sessionEnvelope.parse(response.body).data;
  }

  async registerWithPassword(email: string) {
    const response = await this.stack.call("/auth/register", {
      body: { name: "Password Person", email, password: journeyPassword },
      headers: { "x-forwarded-for": freshAddress() },
    });
    expect(response.status, response.text).toBe(201);
    return sessionEnvelope.parse(response.body).data;
  }

  /**
   * The owner of a password account proves it is them (`POST /auth/reauthenticate`), as unlinking, and linking
   * without the password, need of the session for 5 minutes.
   */
  async reauthenticated(accessToken: string): Promise<void> {
    const response = await this.stack.call("/auth/reauthenticate", {
      token: accessToken,
      body: { password: journeyPassword },
      headers: { "x-forwarded-for": freshAddress() },
    });
    expect(response.status, response.text).toBe(200);
  }

  /**
   * The owner of an account that signs in with `sub` at the provider proves it is them there
   * (`POST /auth/reauthenticate/provider`, then the provider's login page again): the app URL it comes back to.
   */
  async reauthenticateAtProvider(accessToken: string, sub: string, browser = this.browser()): Promise<URL> {
    const started = await this.stack.call("/auth/reauthenticate/provider", {
      token: accessToken,
      body: { provider: "local", redirectTo: this.app },
      headers: { "x-forwarded-for": freshAddress() },
    });
    expect(started.status, started.text).toBe(200);
    const { url } = (started.body as { data: { url: string } }).data;
    return await this.backToApp(await browser.signIn(url, sub), browser);
  }

  /** As `reauthenticateAtProvider`, and the proof recorded. */
  async reauthenticatedAtProvider(accessToken: string, sub: string): Promise<void> {
    const back = await this.reauthenticateAtProvider(accessToken, sub);
    expect(back.searchParams.get("reauthenticated"), back.href).toBe("local");
  }

  /** The app completes a link with the `link_code` the callback put in its URL, as the session of `accessToken`. */
  completeLink(accessToken: string, back: URL) {
    return this.stack.call("/auth/identities/link/complete", {
      token: accessToken,
      body: { code: back.searchParams.get("link_code") ?? "none" },
    });
  }

  async identitiesOf(accessToken: string) {
    const response = await this.stack.call("/auth/identities", { token: accessToken });
    expect(response.status, response.text).toBe(200);
    return identityList.parse((response.body as { data: unknown }).data);
  }
}
