/**
 * SQL of sessions (`app.sessions`): starting one inside the statement that
 * signs a user in, refreshing, listing and ending them. Run as the
 * connection's own role; the statements that act for a caller run behind
 * `withLiveCaller`'s check, so an ended session can do nothing more.
 *
 * @example
 * ```ts
 * const sessions = await withLiveCaller(caller, listSessions(caller));
 * ```
 */
import type { SessionSettings } from "../config/mod.ts";
import type { LogoutScope, SessionInfo } from "../contract/accounts.ts";
import type { CallerClaims } from "../db/caller-transactions.ts";
import type { Query } from "../db/transactions.ts";
import { type Account, accountColumns, type AccountRow, toAccount } from "./account-rows.ts";

/**
 * How a session reached aal2: a code of the authenticator, a recovery code, or a passkey as the second step; or a
 * sign-in with a passkey (`passkey_sign_in`), which proves both factors at once.
 */
export type SecondFactorMethod = "totp" | "recovery_code" | "passkey" | "passkey_sign_in";

/** A second-factor secret sealed by the functions (`auth/sealed-secrets.ts`), and the id of the key that sealed it. */
export interface SealedSecret {
  sealed: string;
  keyId: string;
}

/** A session's level, as its access tokens state it (`app.session_level`). */
export interface SessionLevel {
  /** `aal2` once the second step was made; a session's level never changes. */
  aal: "aal1" | "aal2";
  /** When the session started (the password was proved). */
  startedAt: Date;
  secondFactor?: { method: SecondFactorMethod; at: Date };
  /**
   * The account's active factor, for the token; with its secret sealed under `MFA_SECRET_KEY`, a code is checked
   * against it with no read (a factor sealed under `JWT_SECRET`, of before that key, is read when it is used).
   */
  factor?: { id: string; sealed?: SealedSecret };
}

/** A live session as the statement that started or refreshed it returns it. */
export interface SessionGrant {
  sessionId: string;
  generation: number;
  level: SessionLevel;
  /** Set when the statement signed the user in: the device token the answer carries is of this generation. */
  deviceGeneration?: number;
}

/** What a new session records besides its owner: its timeouts, and what lets the user recognise it. */
export interface NewSession {
  settings: Pick<SessionSettings, "idleTimeoutSeconds" | "maxLifetimeSeconds">;
  userAgent: string | undefined;
  address: string | undefined;
}

/** The columns `app.start_session` and `app.refresh_session` answer a session with. */
export interface SessionColumns {
  session_id: string;
  session_generation: number;
  /** Only from `app.start_session`: the account's device generation, for the sign-in's device token. */
  device_generation?: number;
  session_aal: SessionLevel["aal"];
  session_started_at: Date;
  second_factor: SecondFactorMethod | null;
  second_factor_at: Date | null;
  factor_id: string | null;
  factor_sealed: string | null;
  factor_key_id: string | null;
}

/**
 * `app.start_session(...)` for the user id `ownerExpression`, its other four
 * arguments at `$firstParameter` onwards; pair it with `sessionValues`. With
 * `inheritFrom` (an SQL expression naming a live session of the account) the
 * new session takes that session's level and sign-in: a caller who proved the
 * password again keeps the second step it made. A session started by a
 * provider sign-in says so (`byProvider`), which lets it stand in for the
 * password for 10 minutes.
 */
export function startSessionCall(
  ownerExpression: string,
  firstParameter: number,
  options: { inheritFrom?: string; byProvider?: boolean } = {},
): string {
  const [idle, max, userAgent, address] = [0, 1, 2, 3].map((offset) => `$${firstParameter + offset}`);
  const { inheritFrom, byProvider } = options;
  const extra = byProvider ? ", null, null, 'provider'" : inheritFrom ? `, null, ${inheritFrom}` : "";
  return `app.start_session(${ownerExpression}, ${idle}, ${max}, ${userAgent}, ${address}${extra})`;
}

/** The values of `startSessionCall`'s parameters, in order. */
export function sessionValues(session: NewSession): unknown[] {
  const { settings, userAgent, address } = session;
  return [settings.idleTimeoutSeconds, settings.maxLifetimeSeconds, userAgent ?? null, address ?? null];
}

export function grantOf(row: SessionColumns): SessionGrant {
  return {
    sessionId: row.session_id,
    generation: row.session_generation,
    deviceGeneration: row.device_generation,
    level: {
      aal: row.session_aal,
      startedAt: row.session_started_at,
      ...(row.second_factor && row.second_factor_at
        ? { secondFactor: { method: row.second_factor, at: row.second_factor_at } }
        : {}),
      ...(row.factor_id
        ? {
          factor: {
            id: row.factor_id,
            ...(row.factor_sealed && row.factor_key_id
              ? {
                sealed: { sealed: row.factor_sealed, keyId: row.factor_key_id },
              }
              : {}),
          },
        }
        : {}),
    },
  };
}

/** What a refresh found: a new grant for the account, or why not (each a 401 `code`). */
export type Refresh =
  | { kind: "refreshed"; account: Account; session: SessionGrant }
  | { kind: "invalid" | "expired" | "revoked" | "reused" };

/**
 * Rotates the session's refresh token in one locked statement
 * (`app.refresh_session`): the current generation moves on, its predecessor
 * within the grace answers the same current one, and anything older ends the
 * session (and that commits).
 */
export function refreshSession(
  input: { sessionId: string; generation: number; settings: SessionSettings },
): Query<Partial<AccountRow & SessionColumns> & { outcome: Refresh["kind"] }, Refresh> {
  const { sessionId, generation, settings } = input;
  return {
    // The function predates anonymous accounts: the account's flag is read beside it, in the same statement.
    text: `select r.*, u.is_anonymous
           from app.refresh_session($1, $2, $3, $4, $5) r left join app.users u on u.id = r.id`,
    values: [
      sessionId,
      generation,
      settings.refreshGraceSeconds,
      settings.idleTimeoutSeconds,
      settings.maxLifetimeSeconds,
    ],
    read: ([row]) =>
      row.outcome === "refreshed"
        ? { kind: "refreshed", account: toAccount(row as AccountRow), session: grantOf(row as SessionColumns) }
        : { kind: row.outcome },
  };
}

/**
 * Ends the caller's session, every other one of the account, or all of them;
 * answers how many ended. A global sign-out also voids the account's device
 * tokens: its device generation moves on.
 */
export function endSessions(caller: CallerClaims & { session_id: string }, scope: LogoutScope): Query<unknown, number> {
  return {
    text: `with devices as (
             update app.users set device_generation = device_generation + 1 where id = $1 and $3 = 'global'
           )
           update app.sessions
           set revoked_at = now(), revoked_reason = case $3 when 'local' then 'logout' else 'logout_' || $3 end
           where user_id = $1 and revoked_at is null and expires_at > now()
             and case $3 when 'local' then id = $2 when 'others' then id <> $2 else true end
           returning id`,
    values: [caller.sub, caller.session_id, scope],
    read: (rows) => rows.length,
  };
}

interface SessionRow {
  id: string;
  created_at: Date;
  refreshed_at: Date;
  expires_at: Date;
  user_agent: string | null;
  current: boolean;
}

/** The account's live sessions, the most recently refreshed first, the caller's marked `current`. */
export function listSessions(caller: CallerClaims & { session_id: string }): Query<SessionRow, SessionInfo[]> {
  return {
    text: `select id, created_at, refreshed_at, expires_at, user_agent, id = $2 as current
           from app.sessions
           where user_id = $1 and revoked_at is null and expires_at > now()
           order by refreshed_at desc, id`,
    values: [caller.sub, caller.session_id],
    read: (rows) =>
      rows.map((row) => ({
        id: row.id,
        createdAt: row.created_at.toISOString(),
        lastActiveAt: row.refreshed_at.toISOString(),
        expiresAt: row.expires_at.toISOString(),
        userAgent: row.user_agent,
        current: row.current,
      })),
  };
}

/**
 * Ends one live session of the caller's account; answers its id, or undefined
 * when the account has no live session `sessionId` (another user's, ended, or
 * not a session id at all).
 */
export function endSession(caller: CallerClaims, sessionId: string): Query<{ id: string }, string | undefined> {
  return {
    // A malformed id names no session: compared as text, it never reaches a uuid cast that would fail.
    text: `update app.sessions
           set revoked_at = now(), revoked_reason = 'session_ended'
           where id::text = lower($2) and user_id = $1 and revoked_at is null and expires_at > now()
           returning id`,
    values: [caller.sub, sessionId],
    read: ([row]) => row?.id,
  };
}

/** The caller's own account. */
export function readCaller(caller: CallerClaims): Query<AccountRow, Account> {
  return {
    text: `select ${accountColumns} from app.users where id = $1`,
    values: [caller.sub],
    read: ([row]) => toAccount(row),
  };
}
