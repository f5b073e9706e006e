/**
 * SQL of provider sign-in (`app.oauth_flows`, `app.oauth_codes`,
 * `app.identities`): storing a flow, consuming it at the callback,
 * concluding the callback (`app.complete_oauth_flow`), exchanging the
 * one-time code for a session, and the caller's identities. Each is one
 * statement; the rules (never by email, single use, the last way to sign in)
 * are the migration's functions', so Postgres holds them whatever calls it.
 *
 * @example
 * ```ts
 * const flow = await withServiceTransaction(consumeOAuthFlow(stateHash));
 * ```
 */
import type { SecurityLimits } from "../config/mod.ts";
import type { Identity, IdentityList } from "../contract/identities.ts";
import type { Query } from "../db/transactions.ts";
import { accountColumns, type AccountRow, toAccount } from "./account-rows.ts";
import type { SignedInAccount } from "./accounts.ts";
import { grantOf, type NewSession, type SessionColumns, sessionValues, startSessionCall } from "./sessions.ts";

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

/**
 * Spends the one-time code of `codeHash` (deleted whether or not it was still good) and, when it was good, answered
 * with the verifier of its app's challenge (`verifierChallenge`, the S256 of the verifier sent), and the account is
 * active, starts a session marked as a provider sign-in, notes the identity's sign-in and records it on
 * the security log. Undefined for a code never issued, used, expired, or of a suspended account.
 */
export function exchangeSignInCode(
  input: { codeHash: string; verifierChallenge: string; session: NewSession },
): Query<AccountRow & SessionColumns, SignedInAccount | undefined> {
  return {
    text: `with code as (
             delete from app.oauth_codes c where c.code_hash = $1
             returning c.user_id, c.identity_id,
                       c.expires_at > now() and c.app_code_challenge = $6 as live
           ), account as (
             -- The code's columns (user_id, identity_id, live) share no name with the account's.
             select ${accountColumns} from app.users u join code on u.id = code.user_id
             where code.live and u.status = 'ACTIVE'
           ), started as (
             select s.* from account cross join lateral ${startSessionCall("account.id", 2, { byProvider: true })} s
           ), touched as (
             update app.identities i set last_sign_in_at = now() from code, account
             where i.id = code.identity_id
             returning i.provider
           ), recorded as (
             select app.record_security_event('login_succeeded', account.id, account.id, $5, $4,
                                              jsonb_build_object('sessionId', started.session_id,
                                                                 'provider', touched.provider))
             from account, started, touched
           )
           select account.*, started.* from account, started, recorded`,
    values: [input.codeHash, ...sessionValues(input.session), input.verifierChallenge],
    read: ([row]) => row ? { account: toAccount(row), session: grantOf(row) } : undefined,
  };
}

/** The caller's identities, oldest first, and whether the account has a password. */
export function listIdentities(userId: string): Query<
  {
    id: string | null;
    provider: string | null;
    email: string | null;
    created_at: Date | null;
    last_sign_in_at: Date | null;
    has_password: boolean;
  },
  IdentityList
> {
  return {
    text:
      `select i.id, i.provider, i.email, i.created_at, i.last_sign_in_at, u.password_hash is not null as has_password
           from app.users u left join app.identities i on i.user_id = u.id
           where u.id = $1
           order by i.created_at, i.id`,
    values: [userId],
    read: (rows) => ({
      identities: rows.flatMap((row): Identity[] =>
        row.id && row.provider && row.created_at
          ? [{
            id: row.id,
            provider: row.provider,
            email: row.email,
            createdAt: row.created_at.toISOString(),
            lastSignInAt: row.last_sign_in_at?.toISOString() ?? null,
          }]
          : []
      ),
      hasPassword: rows[0]?.has_password ?? false,
    }),
  };
}

/** What unlinking found (`app.unlink_identity`). */
export type Unlink = "unlinked" | "last_sign_in_method" | "not_found";

/** Unlinks the caller's identity unless it is the account's last way to sign in; records it on the security log. */
export function unlinkIdentity(
  input: { userId: string; identityId: string; address: string | undefined; userAgent: string | undefined },
): Query<{ outcome: Unlink }, Unlink> {
  return {
    text: "select app.unlink_identity($1, $2, $3, $4) as outcome",
    values: [input.userId, input.identityId, input.address ?? null, input.userAgent ?? null],
    read: ([row]) => row.outcome,
  };
}

/** What completing a link found (`app.complete_identity_link`). */
export type LinkCompletion =
  | { kind: "linked"; identity: Identity }
  | { kind: "identity_already_linked" | "invalid_code" };

/**
 * Links the identity the link code of `codeHash` names, when the caller's session is the one that asked for it
 * (any other spends the code and links nothing); records it and queues the owner's mail.
 */
export function completeIdentityLink(input: {
  codeHash: string;
  userId: string;
  sessionId: string;
  address: string | undefined;
  userAgent: string | undefined;
  mail: { subject: string; body: string };
}): Query<
  {
    outcome: LinkCompletion["kind"];
    identity_id: string;
    provider: string;
    email: string | null;
    created_at: Date;
    last_sign_in_at: Date | null;
  },
  LinkCompletion
> {
  return {
    text: "select * from app.complete_identity_link($1, $2, $3, $4, $5, $6, $7)",
    values: [
      input.codeHash,
      input.userId,
      input.sessionId,
      input.address ?? null,
      input.userAgent ?? null,
      input.mail.subject,
      input.mail.body,
    ],
    read: ([row]) =>
      row.outcome === "linked"
        ? {
          kind: "linked",
          identity: {
            id: row.identity_id,
            provider: row.provider,
            email: row.email,
            createdAt: row.created_at.toISOString(),
            lastSignInAt: row.last_sign_in_at?.toISOString() ?? null,
          },
        }
        : { kind: row.outcome },
  };
}
