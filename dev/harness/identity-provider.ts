/**
 * A real OpenID Connect provider for tests of signing in through one, and for trying provider sign-in locally
 * (`LOCAL_IDENTITY_PROVIDER=true npm start`): panva's `oidc-provider`, a certified
 * implementation, on a loopback port, with its development sign-in pages driven over HTTP by `ProviderBrowser`.
 * Nothing is mocked: the service discovers it, redirects to it, exchanges codes with PKCE and verifies signed ID
 * tokens exactly as it would with any provider, so a test covers the relying party's whole handling of the protocol.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { decodeJwt, exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import { freePort } from "./free-port.ts";

/** An account at the provider: `sub` is also the login its sign-in page accepts (with any password). */
export interface ProviderAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
}

export interface IdentityProvider {
  /** `http://127.0.0.1:<port>`, the provider's issuer and discovery base. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Adds or replaces an account the provider's login page accepts (login = sub); the next ID token shows it. */
  setAccount(account: ProviderAccount): void;
  /**
   * From now on, rewrites the ID token of each token response on its way out (`undefined` stops): an attacker
   * between the service and the provider, whose change the service must notice by the signature.
   */
  alterIdTokens(alter: ((idToken: string) => string) | undefined): void;
  /**
   * From now on, reissues the ID token of each token response with `alter`'s claims, signed with the provider's own
   * key (`undefined` stops): a provider that states what `alter` says, such as a token dated in the future.
   */
  reissueIdTokens(alter: ((claims: JWTPayload) => JWTPayload) | undefined): void;
  /** The bodies of every request its token endpoint received, oldest first: what a relying party sent it. */
  tokenRequests(): readonly string[];
  stop(): Promise<void>;
}

/** What this file uses of `oidc-provider`, which ships no typings. */
interface OidcProvider {
  callback(): (request: IncomingMessage, response: ServerResponse) => void;
  /** Koa's: when set, a 500 (such as a login with no account) reaches the test as `signIn`'s error, not as a log. */
  silent: boolean;
}
type OidcProviderConstructor = new (issuer: string, configuration: Record<string, unknown>) => OidcProvider;

/**
 * Hides oidc-provider's notices while `run` runs: on import and construction it warns that Node 20 is unsupported
 * and that the development pages and in-memory storage are not for production: all expected here, and each test
 * file would print them again. Anything else still reaches the console.
 */
function withoutProviderNotices<T>(run: () => T): T {
  const { warn, info } = console;
  const unlessNotice = (write: (...data: unknown[]) => void) => (...data: unknown[]) => {
    if (!String(data[0]).includes("oidc-provider ")) write(...data);
  };
  console.warn = unlessNotice(warn);
  console.info = unlessNotice(info);
  const restore = () => {
    console.warn = warn;
    console.info = info;
  };
  try {
    const result = run();
    if (result instanceof Promise) return result.finally(restore) as T;
    restore();
    return result;
  } catch (error) {
    restore();
    throw error;
  }
}

// Imported once per test file, whoever starts a provider first, so the console is patched around one import only.
let providerClass: Promise<OidcProviderConstructor> | undefined;
function loadProviderClass(): Promise<OidcProviderConstructor> {
  providerClass ??= withoutProviderNotices(() => import("oidc-provider")).then((module) => module.Provider);
  return providerClass;
}

/**
 * Starts a provider with one confidential client (`client_secret_basic`, authorization code with PKCE required) and
 * the given accounts, on a free loopback port.
 */
export async function startIdentityProvider(options: {
  redirectUris: string[];
  accounts?: ProviderAccount[];
  clientId?: string;
  clientSecret?: string;
  /**
   * Its discovery document leaves out `authorization_response_iss_parameter_supported` (RFC 9207), as Google's does
   * and as a hostile provider's may: a relying party then takes a callback without `iss` from it.
   */
  withoutIssParameter?: boolean;
  /**
   * Any login name signs in, as `<name>@example.com` with a verified address: for a developer trying the flow, who
   * has no accounts to set up. Without it, a login that no `setAccount` made fails.
   */
  anyone?: boolean;
}): Promise<IdentityProvider> {
  const clientId = options.clientId ?? "notes-service";
  const clientSecret = options.clientSecret ?? randomBytes(24).toString("base64url");
  const accounts = new Map((options.accounts ?? []).map((account) => [account.sub, account]));

  // The issuer names the port, so the server listens before the provider exists.
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: "test-signing-key", alg: "RS256", use: "sig" };

  const Provider = await loadProviderClass();
  const provider = withoutProviderNotices(() =>
    new Provider(issuer, {
      clients: [{
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ["authorization_code"],
        response_types: ["code"],
      }],
      pkce: { required: () => true },
      // Which claims each scope releases. On oidc-provider's default `conformIdTokenClaims`, the code flow's ID token
      // carries `sub` only and the scopes' claims come from UserInfo (OpenID Connect Core 5.4), as many providers do.
      claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
      // Claims are read at each token, so `setAccount` between sign-ins changes what the next ID token says.
      findAccount: (_context: unknown, id: string) => {
        if (options.anyone && !accounts.has(id)) {
          accounts.set(id, { sub: id, email: `${id.toLowerCase()}@example.com`, email_verified: true, name: id });
        }
        return accounts.has(id) ? { accountId: id, claims: () => ({ ...accounts.get(id), sub: id }) } : undefined;
      },
      jwks: { keys: [signingKey] },
      ttl: { AccessToken: 3600, AuthorizationCode: 60, IdToken: 3600, Interaction: 600, Session: 3600, Grant: 3600 },
      cookies: { keys: [randomBytes(32).toString("base64url")] },
      // Its default error page is HTML (and logs a notice); JSON makes `signIn`'s error say what went wrong.
      renderError: (context: { type: string; body: unknown }, out: Record<string, string>) => {
        context.type = "json";
        context.body = out;
      },
    })
  );
  provider.silent = true;
  const handle = provider.callback();
  let tamper: ((idToken: string) => string | Promise<string>) | undefined;
  const tokenRequests: string[] = [];
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    if (options.withoutIssParameter && request.url === "/.well-known/openid-configuration") {
      rewriteJson(response, ({ authorization_response_iss_parameter_supported: _rfc9207, ...metadata }) => metadata);
    }
    if (request.method === "POST" && request.url?.startsWith("/token")) {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => tokenRequests.push(Buffer.concat(chunks).toString("utf8")));
    }
    if (tamper && request.method === "POST" && request.url?.startsWith("/token")) {
      const alter = tamper;
      rewriteJson(
        response,
        async (body) => typeof body.id_token === "string" ? { ...body, id_token: await alter(body.id_token) } : body,
      );
    }
    handle(request, response);
  });

  return {
    issuer,
    clientId,
    clientSecret,
    setAccount: (account) => void accounts.set(account.sub, account),
    alterIdTokens: (alter) => void (tamper = alter),
    tokenRequests: () => tokenRequests,
    reissueIdTokens: (alter) =>
      void (tamper = alter &&
        ((idToken) =>
          new SignJWT(alter(decodeJwt(idToken)))
            .setProtectedHeader({ alg: "RS256", kid: signingKey.kid, typ: "JWT" })
            .sign(privateKey))),
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** Buffers a JSON response and passes it on as `alter` rewrites it. */
function rewriteJson(
  response: ServerResponse,
  alter: (body: Record<string, unknown>) => Record<string, unknown> | Promise<Record<string, unknown>>,
): void {
  const chunks: Buffer[] = [];
  const { end } = response;
  response.write = ((chunk: Buffer | string) => {
    chunks.push(Buffer.from(chunk));
    return true;
  }) as ServerResponse["write"];
  response.end = ((chunk?: Buffer | string | (() => void)) => {
    if (chunk && typeof chunk !== "function") chunks.push(Buffer.from(chunk));
    void (async () => {
      const altered = JSON.stringify(await alter(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
      response.setHeader("content-length", Buffer.byteLength(altered));
      (end as (this: ServerResponse, chunk: string) => ServerResponse).call(response, altered);
    })();
    return response;
  }) as ServerResponse["end"];
}

/** The settings that configure `provider` as the service's provider `local`, with plain http allowed. */
export function localProviderSettings(provider: IdentityProvider): Record<string, string> {
  return {
    OIDC_PROVIDERS: "local",
    OIDC_LOCAL_ISSUER: provider.issuer,
    OIDC_LOCAL_CLIENT_ID: provider.clientId,
    OIDC_LOCAL_CLIENT_SECRET: provider.clientSecret,
    OIDC_ALLOW_HTTP: "true",
  };
}

/**
 * A provider for a stack about to start: the provider must know the stack's callback before the stack starts, so
 * the stack's port is chosen first. Answers the provider and the stack's settings: that port, the provider as
 * `local`, and `returnUrls` as OAUTH_REDIRECT_URLS.
 */
export async function identityProviderForStack(
  returnUrls: string[],
): Promise<{ provider: IdentityProvider; env: Record<string, string> }> {
  const port = await freePort();
  const provider = await startIdentityProvider({
    redirectUris: [`http://127.0.0.1:${port}/functions/v1/auth/oauth/callback/local`],
  });
  return {
    provider,
    env: { PORT: String(port), ...localProviderSettings(provider), OAUTH_REDIRECT_URLS: returnUrls.join(",") },
  };
}

interface StoredCookie {
  origin: string;
  path: string;
  name: string;
  value: string;
}

/** The sign-in or consent form of a development interaction page, and its cancel link. */
interface InteractionPage {
  prompt: string;
  action: string;
  abort: string;
}

function interactionPageOf(html: string): InteractionPage | undefined {
  const prompt = /<input type="hidden" name="prompt" value="([^"]*)"/.exec(html)?.[1];
  const action = /<form[^>]* action="([^"]*)"/.exec(html)?.[1];
  const abort = /<a href="([^"]*)">\[ Cancel \]<\/a>/.exec(html)?.[1];
  return prompt && action && abort ? { prompt, action, abort } : undefined;
}

/** Which browser each callback URL that `signIn` answered came back in. */
const returnedIn = new WeakMap<URL, ProviderBrowser>();

/** Where the service starts a flow with a browser navigation (a sign-in, or a link's browser step). */
function isServiceStart(url: URL): boolean {
  return /\/auth\/(oauth|identities\/link)\/authorize$/.test(url.pathname);
}

/**
 * A browser: one cookie jar across calls and origins, so a second sign-in of the same browser reuses the provider's
 * session, and the cookie the service sets when a flow starts comes back with its callback, as a real browser's
 * does. Another `ProviderBrowser` is another browser: its jar holds neither.
 */
export class ProviderBrowser {
  readonly #cookies: StoredCookie[] = [];
  /** Per provider origin, whom this browser's provider session is for. */
  readonly #signedInAs = new Map<string, string>();
  /** Sent with every request: a test's `x-forwarded-for`, so each browser is counted at an address of its own. */
  readonly #headers: Record<string, string>;

  constructor(options: { headers?: Record<string, string> } = {}) {
    this.#headers = options.headers ?? {};
  }

  /** The browser of a callback URL that `signIn` answered (the same URL object), if any. */
  static thatReturned(callback: URL): ProviderBrowser | undefined {
    return returnedIn.get(callback);
  }

  /** Keeps the cookies of an answer from `url` that another client fetched for this browser. */
  keep(url: string | URL, headers: Headers): void {
    for (const header of headers.getSetCookie()) this.#store(new URL(url), header);
  }

  /** The `Cookie` header this browser sends to `url`, for a request another client makes for it. */
  cookieFor(url: string | URL): string {
    const target = new URL(url);
    return this.#cookies
      .filter((stored) => stored.origin === target.origin && pathMatches(target.pathname, stored.path))
      .map((stored) => `${stored.name}=${stored.value}`)
      .join("; ");
  }

  /** A navigation of this browser to `url`, with its cookies, not following redirects; keeps what it sets. */
  visit(url: string | URL, method = "GET"): Promise<Response> {
    return this.#request(new URL(url), undefined, method);
  }

  /**
   * Given the provider authorization URL the service redirected to (a full URL at the provider), or the service's
   * start of a flow (`/auth/oauth/authorize?...`, `/auth/identities/link/authorize?...`, visited first), logs in as `sub`
   * (the dev login form; password anything), consents, and returns the URL the provider redirects back to
   * (the relying party's redirect_uri with ?code=&state=&iss=), WITHOUT fetching it.
   * With { abort: true } it cancels at the first page the provider shows (the login page, or consent for a
   * browser already signed in) instead, returning the redirect with ?error=access_denied.
   *
   * The provider skips the pages it need not show (a live session, consent already given), so this follows its
   * redirects and answers whichever page comes until a redirect leaves the provider's origin.
   */
  async signIn(authorizationUrl: string, sub: string, options: { abort?: boolean } = {}): Promise<URL> {
    let url = new URL(authorizationUrl);
    if (isServiceStart(url)) {
      const start = await this.visit(url);
      const location = start.headers.get("location");
      if (start.status !== 302 || location === null) {
        throw new Error(`the service answered ${start.status} at ${url.pathname}: ${await start.text()}`);
      }
      url = new URL(location);
    }
    const provider = url.origin;
    let response = await this.#request(url);
    let pagesShown = 0;
    for (let step = 0; step < 20; step++) {
      const location = response.headers.get("location");
      if (location !== null) {
        url = new URL(location, url);
        if (url.origin !== provider) return this.#leaving(provider, url, sub, pagesShown, options.abort === true);
        response = await this.#request(url);
        continue;
      }
      const body = await response.text();
      const page = response.status === 200 ? interactionPageOf(body) : undefined;
      if (!page) {
        // Its one 500 a test can cause: a login the provider has no account for.
        const hint = response.status === 500 ? ` (is there an account for "${sub}"? setAccount first)` : "";
        throw new Error(`the provider answered ${response.status} at ${url.pathname}${hint}: ${body.slice(0, 500)}`);
      }
      pagesShown++;
      if (options.abort) {
        url = new URL(page.abort, url);
        response = await this.#request(url);
      } else if (page.prompt === "login") {
        url = new URL(page.action, url);
        response = await this.#request(url, { prompt: "login", login: sub, password: "any password" });
        this.#signedInAs.set(provider, sub);
      } else if (page.prompt === "consent") {
        url = new URL(page.action, url);
        response = await this.#request(url, { prompt: "consent" });
      } else {
        throw new Error(`the provider asked for an unknown prompt "${page.prompt}" at ${url.pathname}`);
      }
    }
    throw new Error(`the provider kept redirecting within itself; last at ${url.pathname}`);
  }

  /** Checks the way out of the provider is the one asked for: a session the provider reused may be someone else's. */
  #leaving(provider: string, redirect: URL, sub: string, pagesShown: number, abort: boolean): URL {
    if (abort && pagesShown === 0) {
      throw new Error("the provider showed no page to cancel at: this browser's session and consent were reused");
    }
    const signedInAs = this.#signedInAs.get(provider);
    if (!abort && signedInAs !== sub) {
      throw new Error(
        `this browser is signed in at the provider as "${signedInAs}", not "${sub}": use another browser`,
      );
    }
    returnedIn.set(redirect, this);
    return redirect;
  }

  /** GETs `url` (or `method`), or POSTs `form` to it, with the jar's cookies, not following redirects. */
  async #request(url: URL, form?: Record<string, string>, method = "GET"): Promise<Response> {
    const cookie = this.cookieFor(url);
    const response = await fetch(url, {
      method: form ? "POST" : method,
      headers: {
        ...this.#headers,
        ...(cookie ? { cookie } : {}),
        ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {}),
      },
      body: form ? new URLSearchParams(form) : undefined,
      redirect: "manual",
    });
    for (const header of response.headers.getSetCookie()) this.#store(url, header);
    return response;
  }

  /** Keeps a Set-Cookie in the jar by origin, path and name, as a browser would; an expired one is removed. */
  #store(url: URL, header: string): void {
    const [pair, ...attributes] = header.split(";").map((part) => part.trim());
    const separator = pair.indexOf("=");
    const name = pair.slice(0, separator);
    const value = pair.slice(separator + 1);
    let path = url.pathname.slice(0, url.pathname.lastIndexOf("/")) || "/";
    let expired = false;
    for (const attribute of attributes) {
      const [key, attributeValue = ""] = attribute.split("=");
      switch (key.toLowerCase()) {
        case "path":
          path = attributeValue;
          break;
        case "expires":
          expired ||= Date.parse(attributeValue) <= Date.now();
          break;
        case "max-age":
          expired ||= Number(attributeValue) <= 0;
          break;
      }
    }
    const index = this.#cookies.findIndex((stored) =>
      stored.origin === url.origin && stored.path === path && stored.name === name
    );
    if (index !== -1) this.#cookies.splice(index, 1);
    if (!expired) this.#cookies.push({ origin: url.origin, path, name, value });
  }
}

function pathMatches(requestPath: string, cookiePath: string): boolean {
  return requestPath === cookiePath ||
    (requestPath.startsWith(cookiePath) && (cookiePath.endsWith("/") || requestPath[cookiePath.length] === "/"));
}
