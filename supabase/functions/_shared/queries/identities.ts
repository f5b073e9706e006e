/**
 * SQL of the caller's identities (`app.identities`, `app.oauth_codes`):
 * exchanging a provider sign-in's one-time code for a session, listing,
 * linking and unlinking. The flows that lead there are in `oauth-flows.ts`.
 * Each is one statement; the rules (never by email, single use, the last way
 * to sign in) are the migration's functions', so Postgres holds them whatever
 * calls it.
 *
 * @example
 * ```ts
 * const identities = await withCallerTransaction(caller, listIdentities(caller.sub));
 * ```
 */
import type { Identity, IdentityList } from "../contract/identities.ts";
import type { Query } from "../db/transactions.ts";
import { accountColumns, type AccountRow, toAccount } from "./account-rows.ts";
import type { SignedInAccount } from "./accounts.ts";
import { grantOf, type NewSession, type SessionColumns, sessionValues, startSessionCall } from "./sessions.ts";

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
  | { kind: "identity_already_linked" | "invalid_code" | "email_taken" };

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
