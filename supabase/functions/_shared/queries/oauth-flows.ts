/**
 * SQL of a provider sign-in's flow (`app.oauth_flows`): storing it at the
 * start, binding a link's flow to the browser, consuming it at the callback
 * and concluding the callback (`app.complete_oauth_flow`), or a proof at the
 * provider. Each is one statement; the rules (never by email, single use)
 * are the migration's functions', so Postgres holds them whatever calls it.
 *
 * @example
 * ```ts
 * const flow = await withServiceTransaction(consumeOAuthFlow(stateHash));
 * ```
 */
import type { SecurityLimits } from "../config/mod.ts";
import type { Query } from "../db/transactions.ts";

/** What a flow stores besides its state's hash: the provider, PKCE verifier, nonce and where to return. */
export interface NewOAuthFlow {
  stateHash: string;
  provider: string;
  codeVerifier: string;
  nonce: string;
  redirectTo: string;
  /** The app's PKCE challenge, which the one-time code's exchange must answer; every sign-in has one. */
  appCodeChallenge?: string;
  /** The HMAC of the starting browser's cookie (`flow-binding.ts`); a link's is set when its browser comes. */
  browserHash?: string;
}

/**
 * A link's account, its session (live at the callback) and, unless the session gave a proof lately, the password's
 * hash; or (`reauthenticate`) the account and session a sign-in at a linked provider is a proof for.
 */
export interface LinkRequest {
  userId: string;
  sessionId: string;
  passwordHash: string | undefined;
  reauthenticate?: boolean;
}

/** What storing a flow found: seconds to wait (0 when stored), and for a link whether the caller may make it. */
export interface StartedFlow {
  retryAfter: number;
  linkAllowed: boolean;
}

/**
 * Stores a flow for 10 minutes (`app.start_oauth_flow`): a sign-in counted against the address's limit; a link only
 * for a session that gave a proof within 5 minutes or a password still the account's; a proof at a provider only for
 * an account with an identity there.
 */
export function startOAuthFlow(
  flow: NewOAuthFlow,
  client: { address: string | undefined; limits: SecurityLimits },
  link?: LinkRequest,
): Query<{ retry_after: number; link_allowed: boolean }, StartedFlow> {
  return {
    text: "select * from app.start_oauth_flow($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
    values: [
      flow.stateHash,
      flow.provider,
      flow.codeVerifier,
      flow.nonce,
      flow.redirectTo,
      client.address ?? null,
      client.limits.loginAddressWindowSeconds,
      client.limits.loginMaxAttemptsPerAddress,
      link?.userId ?? null,
      link?.sessionId ?? null,
      link?.passwordHash ?? null,
      flow.appCodeChallenge ?? null,
      flow.browserHash ?? null,
      link?.reauthenticate ?? false,
    ],
    read: ([row]) => ({ retryAfter: row.retry_after, linkAllowed: row.link_allowed }),
  };
}

/** A flow the callback consumed: gone from the table whether or not it was still within its 10 minutes. */
export interface ConsumedFlow {
  provider: string;
  codeVerifier: string;
  nonce: string;
  redirectTo: string;
  link: { userId: string; sessionId: string } | undefined;
  /** A sign-in at a linked provider, for a proof on `link`'s session. */
  reauthenticate: boolean;
  appCodeChallenge: string | undefined;
  expired: boolean;
}

/**
 * Deletes the flow of `stateHash` (`app.consume_oauth_flow`) and answers it when the callback came to its provider's
 * redirect URI in the browser it is bound to; undefined for a state never issued or already used, a callback in
 * another browser (`browserHash` not the flow's, or none), or at another provider's redirect URI (mix-up).
 */
export function consumeOAuthFlow(input: {
  stateHash: string;
  browserHash: string | undefined;
  callbackProvider: string | undefined;
}): Query<{
  provider: string;
  code_verifier: string;
  nonce: string;
  redirect_to: string;
  link_user_id: string | null;
  link_session_id: string | null;
  app_code_challenge: string | null;
  reauthenticate: boolean;
  expired: boolean;
}, ConsumedFlow | undefined> {
  return {
    text: "select * from app.consume_oauth_flow($1, $2, $3)",
    values: [input.stateHash, input.browserHash ?? null, input.callbackProvider ?? null],
    read: ([row]) =>
      row && {
        provider: row.provider,
        codeVerifier: row.code_verifier,
        nonce: row.nonce,
        redirectTo: row.redirect_to,
        link: row.link_user_id && row.link_session_id
          ? { userId: row.link_user_id, sessionId: row.link_session_id }
          : undefined,
        reauthenticate: row.reauthenticate,
        appCodeChallenge: row.app_code_challenge ?? undefined,
        expired: row.expired,
      },
  };
}

/** What a link's (or a proof's) browser step needs to send the browser on to the provider. */
export interface BoundLinkFlow {
  provider: string;
  codeVerifier: string;
  nonce: string;
  /** A proof at the provider: its authorization URL asks for a new sign-in. */
  reauthenticate: boolean;
}

/**
 * Binds the link flow of `stateHash` to the browser of `browserHash` (`app.bind_link_flow`): once, by the first
 * browser to come, within its 10 minutes; undefined otherwise.
 */
export function bindLinkFlow(
  stateHash: string,
  browserHash: string,
): Query<
  { provider: string; code_verifier: string; nonce: string; reauthenticate: boolean },
  BoundLinkFlow | undefined
> {
  return {
    text: "select * from app.bind_link_flow($1, $2)",
    values: [stateHash, browserHash],
    read: ([row]) =>
      row && {
        provider: row.provider,
        codeVerifier: row.code_verifier,
        nonce: row.nonce,
        reauthenticate: row.reauthenticate,
      },
  };
}

/** What the callback concluded (`app.complete_oauth_flow`). */
export type FlowOutcome =
  | "signed_in"
  | "registered"
  | "link_pending"
  | "linked"
  | "identity_not_linked"
  | "identity_already_linked"
  | "email_required"
  | "account_suspended"
  | "link_expired";

/**
 * Signs the identity in or makes its account, storing the one-time code's hash; or, for a link, stores the code's
 * hash for the session that asked, which completes the link with it (`completeIdentityLink`).
 */
export function completeOAuthFlow(input: {
  provider: string;
  claims: { issuer: string; subject: string; email: string | undefined; emailVerified: boolean; name: string };
  link: { userId: string; sessionId: string } | undefined;
  appCodeChallenge: string | undefined;
  codeHash: string;
  codeSeconds: number;
  address: string | undefined;
  userAgent: string | undefined;
}): Query<{ outcome: FlowOutcome }, FlowOutcome> {
  const { claims, link } = input;
  return {
    text: "select outcome from app.complete_oauth_flow($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
    values: [
      input.provider,
      claims.issuer,
      claims.subject,
      claims.email ?? null,
      claims.emailVerified,
      claims.name,
      link?.userId ?? null,
      link?.sessionId ?? null,
      input.codeHash,
      input.codeSeconds,
      input.address ?? null,
      input.userAgent ?? null,
      input.appCodeChallenge ?? null,
    ],
    read: ([row]) => row.outcome,
  };
}

/** What a sign-in at a linked provider, for a proof, concluded (`app.complete_provider_reauthentication`). */
export type ReauthenticationOutcome =
  | "reauthenticated"
  | "identity_not_linked"
  | "link_expired";

/**
 * Records a sign-in at a provider as the proof of the session that asked for it, when the identity that signed in
 * is one of the account's and the session is still live.
 */
export function completeProviderReauthentication(input: {
  link: { userId: string; sessionId: string };
  claims: { issuer: string; subject: string };
  address: string | undefined;
  userAgent: string | undefined;
}): Query<{ outcome: ReauthenticationOutcome }, ReauthenticationOutcome> {
  return {
    text: "select app.complete_provider_reauthentication($1, $2, $3, $4, $5, $6) as outcome",
    values: [
      input.link.userId,
      input.link.sessionId,
      input.claims.issuer,
      input.claims.subject,
      input.address ?? null,
      input.userAgent ?? null,
    ],
    read: ([row]) => row.outcome,
  };
}
