/**
 * Sign-in with an OpenID Connect provider, and the providers linked to the signed-in account:
 * `client.identities`. The browser leaves the app for the provider and comes back to it.
 */
import { calculatePKCECodeChallenge, generateRandomCodeVerifier } from "oauth4webapi";
import type {
  Identity,
  IdentityLinkStart,
  IdentityList,
  Session,
  UnlinkedIdentity,
} from "../../supabase/functions/_shared/contract/mod.ts";
import { operations } from "../operations.ts";
import type { BodyOf, RequestOptions } from "./options.ts";
import type { Transport } from "./transport.ts";

/** Where a provider sign-in or link starts, and where the browser comes back to. */
export interface ProviderRedirect {
  /** A provider the service is configured with (`OIDC_PROVIDERS`), e.g. `google`. */
  provider: string;
  /**
   * The app's page the browser returns to, absolute, exactly as the service lists it in `OAUTH_REDIRECT_URLS`
   * (query included). That page calls {@link IdentitiesApi.completeSignIn}.
   */
  redirectTo: string;
}

/** The `error` of a code that reached a tab which started no sign-in: it was not exchanged. */
export const notStartedHere = "not_started_here";

/** The query parameters a provider sign-in's return adds to the app's URL, which completing it removes. */
export const providerReturnParameters = [
  "code",
  "link_code",
  "linked",
  "reauthenticated",
  "error",
  "error_description",
] as const;

/**
 * What {@link IdentitiesApi.completeSignIn} found in the page's URL:
 * - `signed_in`: the one-time code was exchanged and the session kept, as login keeps it. When `mfaRequired` is
 *   true the session must make the second step (`client.mfa.verify` or `recover`) before anything else, as after
 *   a login.
 * - `linked`: a link the signed-in user started is complete; `provider` can now sign in to this account. `identity`
 *   is the one linked, when this call completed the link (the service hands the asking session a link code, which
 *   this call sends), and undefined when the identity was the account's already.
 * - `reauthenticated`: a proof this session asked for at `provider` ({@link IdentitiesApi.reauthenticate})
 *   is recorded: for 5 minutes the session may change how the account signs in.
 * - `error`: nothing was signed in or linked; `error` is one of the contract's `providerSignInErrors`
 *   (`access_denied`, `identity_not_linked`, ...) and `description` the service's hint. Show your own words. Or
 *   `error` is `not_started_here`: a code arrived in a tab that started no sign-in (one an attacker handed this
 *   browser, to sign it in to their account), and was not used.
 * - `none`: the URL holds no provider return: an ordinary start of the app.
 */
export type ProviderSignInResult =
  | { outcome: "signed_in"; session: Session; mfaRequired: boolean }
  | { outcome: "linked"; provider: string; identity: Identity | undefined }
  | { outcome: "reauthenticated"; provider: string }
  | { outcome: "error"; error: string; description: string | undefined }
  | { outcome: "none" };

/** Provider sign-in, its completion, and the account's linked identities. */
export class IdentitiesApi {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * The URL that starts a sign-in with `provider` (`GET /auth/oauth/authorize`): a browser navigation, with no
   * key and no token, so it can also be a link's `href` (opened in this tab). It makes a new PKCE verifier, which
   * the page keeps (`navigation.saveVerifier`), and carries its challenge: the code the browser comes back with
   * is exchanged only with that verifier, so only this tab can finish the sign-in. After the provider, the
   * browser comes back to `redirectTo`, where {@link IdentitiesApi.completeSignIn} finishes. Throws where the client
   * has no page (give `navigation`).
   */
  async signInUrl({ provider, redirectTo }: ProviderRedirect): Promise<string> {
    const page = this.#transport.page();
    const verifier = generateRandomCodeVerifier();
    const url = this.#transport.url(operations.oauthAuthorize);
    url.searchParams.set("provider", provider);
    url.searchParams.set("redirect_to", redirectTo);
    url.searchParams.set("code_challenge", await calculatePKCECodeChallenge(verifier));
    url.searchParams.set("code_challenge_method", "S256");
    page.saveVerifier(verifier);
    return url.href;
  }

  /**
   * Starts a sign-in with `provider`: leaves the page for the service, which sends the browser on to the
   * provider (`navigation.assign` of {@link IdentitiesApi.signInUrl}). Nothing is sent from here, and nothing comes
   * back to this page: the browser returns to `redirectTo`. A provider that is not configured, or a `redirectTo`
   * the service does not list, is answered there as a JSON 400. Throws, leaving the page as it is, where the
   * client has no page to navigate (give `navigation`).
   */
  async signIn(redirect: ProviderRedirect): Promise<void> {
    const url = await this.signInUrl(redirect);
    this.#transport.page().assign(url);
  }

  /**
   * Finishes a provider sign-in or link on the page the browser came back to: reads `code`, `link_code`, `linked`
   * or `error` from the page's URL (or from `url`, when given), removes them from the page's URL at once (so a reload or a
   * shared link never carries the one-time code), and for a code exchanges it with the verifier the page kept
   * (`POST /auth/oauth/token`, valid 60 seconds, once) and keeps the session as login does; for a link code,
   * completes the link with this client's session (`POST /auth/identities/link/complete`). Call it once when the
   * app starts. Throws the exchange's {@link NotesApiError} (400 `invalid_code` for a code spent, expired, of a
   * suspended account, or started in another tab or browser: start the sign-in again), or the completion's (400
   * `invalid_code`, 409 `identity_already_linked`; `not_signed_in` without a session).
   */
  async completeSignIn(
    options: { url?: string } & RequestOptions = {},
  ): Promise<ProviderSignInResult> {
    const href = options.url ?? this.#transport.navigation?.url();
    if (href === undefined) return { outcome: "none" };
    const url = new URL(href);
    const found = Object.fromEntries(providerReturnParameters.map((name) => [name, url.searchParams.get(name)]));
    if (
      found.code === null && found.link_code === null && found.linked === null && found.reauthenticated === null &&
      found.error === null
    ) {
      return { outcome: "none" };
    }
    if (options.url === undefined) {
      for (const name of providerReturnParameters) url.searchParams.delete(name);
      this.#transport.navigation?.replace(url.href);
    }
    if (found.error !== null) {
      return { outcome: "error", error: found.error, description: found.error_description ?? undefined };
    }
    if (found.linked !== null) return { outcome: "linked", provider: found.linked, identity: undefined };
    if (found.reauthenticated !== null) return { outcome: "reauthenticated", provider: found.reauthenticated };
    if (found.link_code !== null) {
      // Only the session that asked for the link can complete it: this client's.
      const identity = await this.#transport.call("completeLink", {
        body: { code: found.link_code },
        deadline: this.#transport.deadline(options),
      }) as Identity;
      return { outcome: "linked", provider: identity.provider, identity };
    }
    // The verifier serves one exchange, whatever its answer.
    const codeVerifier = this.#transport.navigation?.loadVerifier();
    this.#transport.navigation?.saveVerifier(undefined);
    // No sign-in was started in this tab: the code is someone else's (an attacker's link, to sign this browser in
    // to their account), and is not sent.
    if (codeVerifier === undefined) {
      return { outcome: "error", error: notStartedHere, description: "No sign-in was started here; start it again" };
    }
    const session = this.#transport.keep(
      await this.#transport.call("oauthToken", {
        body: { code: found.code, codeVerifier },
        deadline: this.#transport.deadline(options),
      }) as Session,
    );
    return { outcome: "signed_in", session, mfaRequired: session.mfaRequired };
  }

  /** The providers the signed-in account can sign in with, and whether it has a password too. */
  async list(request: RequestOptions = {}): Promise<IdentityList> {
    return await this.#transport.call("listIdentities", {
      deadline: this.#transport.deadline(request),
    }) as IdentityList;
  }

  /**
   * Starts linking `provider` to the signed-in account; answers the URL to send the browser to (this service's
   * step that binds the link to the browser, then the provider; good for 10 minutes, once), and
   * with `navigate: true` also leaves the page for it. After the provider, the browser comes back to
   * `redirectTo` with a `link_code` (or an error), which {@link IdentitiesApi.completeSignIn} sends from this session to
   * complete the link. `password` is needed unless this session gave a proof within the last 5 minutes
   * ({@link AuthApi.reauthenticate}, {@link IdentitiesApi.reauthenticate}): without it the call throws a 400 naming
   * `password` (ask for it, call again); a wrong one is 401 `invalid_credentials`. An anonymous account needs none:
   * the link signs it up with the identity's email and name, keeping every note (refresh the session to see it).
   */
  async link(
    body: BodyOf<"linkIdentity">,
    options: { navigate?: boolean } & RequestOptions = {},
  ): Promise<IdentityLinkStart> {
    // Checked before the call: a link started here must be able to leave the page.
    const page = options.navigate ? this.#transport.page() : undefined;
    const start = await this.#transport.call("linkIdentity", {
      body,
      deadline: this.#transport.deadline(options),
    }) as IdentityLinkStart;
    page?.assign(start.url);
    return start;
  }

  /**
   * The proof of an account that signs in with a provider (`POST /auth/reauthenticate/provider`): answers the
   * provider's URL, where the person signs in again whatever session the provider holds, and with
   * `navigate: true` leaves the page for it. The browser comes back to `redirectTo` with `reauthenticated`, which
   * {@link IdentitiesApi.completeSignIn} reads; the session may then change how the account signs in for 5 minutes.
   * Throws 404 `identity_not_found` when no identity of `provider` is linked to the account.
   */
  async reauthenticate(
    body: BodyOf<"reauthenticateWithProvider">,
    options: { navigate?: boolean } & RequestOptions = {},
  ): Promise<IdentityLinkStart> {
    const page = options.navigate ? this.#transport.page() : undefined;
    const start = await this.#transport.call("reauthenticateWithProvider", {
      body,
      deadline: this.#transport.deadline(options),
    }) as IdentityLinkStart;
    page?.assign(start.url);
    return start;
  }

  /**
   * Unlinks one of the account's identities (`id` of {@link IdentitiesApi.list}), from a session that proved its
   * owner within 5 minutes ({@link AuthApi.reauthenticate}; else 403 `reauthentication_required`). Throws 409
   * `last_sign_in_method` when it is the account's only way to sign in, and 404 `identity_not_found` for an id
   * that is none of its.
   */
  async unlink(id: string, request: RequestOptions = {}): Promise<UnlinkedIdentity> {
    return await this.#transport.call("unlinkIdentity", {
      query: { id },
      deadline: this.#transport.deadline(request),
    }) as UnlinkedIdentity;
  }
}
