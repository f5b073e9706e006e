/**
 * SQL of passkeys (`app.passkeys`, `app.passkey_challenges`): starting a
 * ceremony, storing a verified credential, the two statements of an assertion
 * (the read that spends the challenge and finds the credential, then the
 * write that moves its counter and starts the session or records the proof).
 * Listing, renaming and removing are in `passkey-management.ts`. The rules (single-use challenges, the proof
 * for registering, the cap, the counter, the last way in) are the migration's
 * functions', so Postgres holds them whatever calls it.
 *
 * @example
 * ```ts
 * const start = await withServiceTransaction(beginAssertion({ challenge, purpose: "sign_in", credentialId }));
 * ```
 */
import type { Query } from "../db/transactions.ts";
import { type Account, accountColumns, type AccountRow, toAccount } from "./account-rows.ts";
import { grantOf, type NewSession, type SessionColumns, type SessionGrant, sessionValues } from "./sessions.ts";

/** Where a request came from, for the security log. */
export interface Client {
  address: string | undefined;
  userAgent: string | undefined;
}

/** What a ceremony's challenge is for: a registration, a usernameless sign-in, or a session's own ceremony. */
export type ChallengePurpose = "register" | "sign_in" | "session";

/** What starting a ceremony found. */
export type ChallengeStart =
  | { kind: "started"; credentialIds: string[] }
  | { kind: "throttled"; retryAfter: number }
  | { kind: "limit_reached" };

/**
 * Stores `challenge` for 5 minutes (`app.start_passkey_challenge`), rate-limited per address; for an account's
 * ceremony, answers its credential ids. A registration needs a recent proof (else PTRAU) and room for one more.
 */
export function startChallenge(input: {
  purpose: ChallengePurpose;
  challenge: string;
  userId?: string;
  sessionId?: string;
  address: string | undefined;
  windowSeconds: number;
  maxPerAddress: number;
}): Query<
  { outcome: ChallengeStart["kind"]; retry_after: number | null; credential_ids: string[] | null },
  ChallengeStart
> {
  return {
    text: "select * from app.start_passkey_challenge($1, $2, $3::uuid, $4::uuid, $5, $6, $7)",
    values: [
      input.purpose,
      input.challenge,
      input.userId ?? null,
      input.sessionId ?? null,
      input.address ?? null,
      input.windowSeconds,
      input.maxPerAddress,
    ],
    read: ([row]) => {
      if (row.outcome === "throttled") return { kind: "throttled", retryAfter: row.retry_after ?? 1 };
      if (row.outcome === "limit_reached") return { kind: "limit_reached" };
      return { kind: "started", credentialIds: row.credential_ids ?? [] };
    },
  };
}

/** A credential the function verified, to store. */
export interface NewPasskey {
  credentialId: string;
  publicKey: Uint8Array;
  signCount: number;
  transports: string[];
  deviceType: "singleDevice" | "multiDevice";
  backedUp: boolean;
  aaguid: string;
  name: string;
}

/** What storing a credential found. */
export type Registration =
  | { kind: "registered"; passkeyId: string; createdAt: Date }
  | { kind: "challenge_invalid" | "limit_reached" | "already_registered" };

/** Stores a verified credential for the caller's session (`app.register_passkey`); logged and mailed. */
export function registerPasskey(
  input: { userId: string; sessionId: string; challenge: string; passkey: NewPasskey } & Client,
): Query<{ outcome: Registration["kind"]; passkey_id: string | null; created_at: Date | null }, Registration> {
  const { passkey } = input;
  return {
    text: "select * from app.register_passkey($1, $2::uuid, $3, $4, $5, $6, $7, $8, $9, $10::uuid, $11, $12, $13)",
    values: [
      input.userId,
      input.sessionId,
      input.challenge,
      passkey.credentialId,
      passkey.publicKey,
      passkey.signCount,
      passkey.transports,
      passkey.deviceType,
      passkey.backedUp,
      passkey.aaguid,
      passkey.name,
      input.address ?? null,
      input.userAgent ?? null,
    ],
    read: ([row]) =>
      row.outcome === "registered" && row.passkey_id && row.created_at
        ? { kind: "registered", passkeyId: row.passkey_id, createdAt: row.created_at }
        : { kind: row.outcome === "registered" ? "challenge_invalid" : row.outcome } as Registration,
  };
}

/** A stored credential, as an assertion is verified against it. */
export interface StoredPasskey {
  passkeyId: string;
  userId: string;
  publicKey: Uint8Array;
  signCount: number;
  transports: string[];
}

/** What the read of an assertion found: a spent challenge and the credential, or why not. */
export type AssertionStart =
  | { kind: "found"; passkey: StoredPasskey }
  | { kind: "challenge_invalid" | "unknown_credential" };

/**
 * Spends the challenge and reads the credential (`app.begin_passkey_assertion`): a ceremony must read the public
 * key before it can verify, so an assertion costs this round trip before the one that writes.
 */
export function beginAssertion(input: {
  challenge: string;
  purpose: "sign_in" | "session";
  userId?: string;
  sessionId?: string;
  credentialId: string;
}): Query<
  {
    challenge_ok: boolean;
    passkey_id: string | null;
    user_id: string | null;
    public_key: Uint8Array | null;
    sign_count: string | number | null;
    transports: string[] | null;
  },
  AssertionStart
> {
  return {
    text: "select * from app.begin_passkey_assertion($1, $2, $3::uuid, $4::uuid, $5)",
    values: [input.challenge, input.purpose, input.userId ?? null, input.sessionId ?? null, input.credentialId],
    read: ([row]) => {
      if (!row?.challenge_ok) return { kind: "challenge_invalid" };
      if (!row.passkey_id || !row.user_id || !row.public_key) return { kind: "unknown_credential" };
      return {
        kind: "found",
        passkey: {
          passkeyId: row.passkey_id,
          userId: row.user_id,
          publicKey: new Uint8Array(row.public_key),
          signCount: Number(row.sign_count ?? 0),
          transports: row.transports ?? [],
        },
      };
    },
  };
}

/** What the function learned from a verified assertion, for Postgres to record. */
export interface VerifiedUse {
  passkeyId: string;
  signCount: number;
  backedUp: boolean;
}

/** The outcome of a sign-in or a second step with a passkey. */
export type PasskeySession =
  | { kind: "accepted"; account: Account; session: SessionGrant }
  | { kind: "counter_regressed" | "suspended" | "gone" };

type StepRow = Partial<AccountRow> & SessionColumns & { outcome: string };

/** The account's columns read from `app.users u`. */
const userColumns = accountColumns.split(", ").map((column) => `u.${column}`).join(", ");

function stepQuery(call: string, values: unknown[]): Query<StepRow, PasskeySession> {
  return {
    text: `select step.*, ${userColumns}
           from ${call} step
           left join app.users u
             on step.outcome = 'accepted' and u.id = (select p.user_id from app.passkeys p where p.id = $1::uuid)`,
    values,
    read: ([row]) => {
      if (!row) return { kind: "gone" };
      if (row.outcome !== "accepted") return { kind: row.outcome as "counter_regressed" | "suspended" | "gone" };
      return { kind: "accepted", account: toAccount(row as AccountRow), session: grantOf(row) };
    },
  };
}

/** Moves the counter and starts an aal2 session signed in with the passkey (`app.sign_in_with_passkey`). */
export function signInWithPasskey(input: { use: VerifiedUse; session: NewSession }): Query<StepRow, PasskeySession> {
  const { use } = input;
  return stepQuery("app.sign_in_with_passkey($1::uuid, $2, $3, $4, $5, $6, $7)", [
    use.passkeyId,
    use.signCount,
    use.backedUp,
    ...sessionValues(input.session),
  ]);
}

/** Moves the counter, ends the caller's aal1 session and starts its aal2 successor. */
export function passSecondStepWithPasskey(
  input: { use: VerifiedUse; userId: string; callerSessionId: string; session: NewSession },
): Query<StepRow, PasskeySession> {
  const { use } = input;
  return stepQuery("app.pass_second_step_with_passkey($2::uuid, $3::uuid, $1::uuid, $4, $5, $6, $7, $8, $9)", [
    use.passkeyId,
    input.userId,
    input.callerSessionId,
    use.signCount,
    use.backedUp,
    ...sessionValues(input.session),
  ]);
}

/** The outcome of a proof with a passkey. */
export type PasskeyProof = { kind: "accepted"; validUntil: Date } | { kind: "counter_regressed" | "gone" };

/** Moves the counter and records the proof on the caller's session (`app.reauthenticate_with_passkey`). */
export function reauthenticateWithPasskey(
  input: { use: VerifiedUse; userId: string; sessionId: string } & Client,
): Query<{ outcome: string; valid_until: Date | null }, PasskeyProof> {
  const { use } = input;
  return {
    text: "select * from app.reauthenticate_with_passkey($1, $2::uuid, $3::uuid, $4, $5, $6, $7)",
    values: [
      input.userId,
      input.sessionId,
      use.passkeyId,
      use.signCount,
      use.backedUp,
      input.address ?? null,
      input.userAgent ?? null,
    ],
    read: ([row]) =>
      row.outcome === "accepted" && row.valid_until
        ? { kind: "accepted", validUntil: row.valid_until }
        : { kind: row.outcome === "counter_regressed" ? "counter_regressed" : "gone" },
  };
}

/** Counts a wrong assertion of the account's credential against its cap of failed sign-ins, and logs it. */
export function recordPasskeyFailure(
  input: { userId: string; reason: string; accountWindowSeconds: number } & Client,
): Query<unknown, void> {
  return {
    text: "select app.record_passkey_failure($1, $2, $3, $4, $5)",
    values: [input.userId, input.reason, input.accountWindowSeconds, input.address ?? null, input.userAgent ?? null],
    read: () => undefined,
  };
}
