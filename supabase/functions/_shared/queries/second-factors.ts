/**
 * SQL of the second factor (`app.second_factors`, `app.recovery_codes`):
 * enrolling, activating, the second step of a sign-in, removing the factor and
 * replacing the recovery codes, each one statement calling the function of
 * the same name in the migration, which checks and records the attempt under
 * the factor's row lock. The functions send only what they computed: the time
 * step a code matched (Postgres never sees a secret in the clear) or a
 * recovery code's keyed hash.
 *
 * @example
 * ```ts
 * const step = await withLiveCaller(caller, passSecondStep({ userId, callerSessionId, factorId, matched, session }));
 * ```
 */
import type { User } from "../contract/accounts.ts";
import type { FactorInfo } from "../contract/second-factor.ts";
import { uuidOrNull } from "../http/uuid.ts";
import type { Query } from "../db/transactions.ts";
import { type Account, accountColumns, type AccountRow, toAccount } from "./account-rows.ts";
import {
  grantOf,
  type NewSession,
  type SealedSecret,
  type SessionColumns,
  type SessionGrant,
  sessionValues,
} from "./sessions.ts";

/** What the code sent proved: the time step of the authenticator's code it matched (none: undefined), or a recovery code. */
export interface FactorProof {
  matchedStep?: number;
  recoveryHash?: string;
}

/** An attempt at the factor that was not accepted: a wrong (or replayed) code, a locked factor, or no such factor. */
export type RefusedAttempt =
  | { kind: "wrong" }
  | { kind: "locked"; retryAfter: number }
  | { kind: "locked_out" }
  | { kind: "gone" };

/** The outcome of a step that answers a new session at aal2. */
export type SecondStep =
  | { kind: "accepted"; account: Account; session: SessionGrant; recoveryCodesLeft: number }
  | RefusedAttempt;

type SecondStepRow = Partial<AccountRow> & SessionColumns & {
  outcome: "accepted" | "wrong" | "locked" | "locked_out" | "gone";
  retry_after: number | null;
  recovery_codes_left: number | null;
};

/** The refusal a statement's `outcome` and `retry_after` say, for any outcome but 'accepted'. */
export function refusal(
  row: { outcome: string; retry_after: number | null },
): RefusedAttempt {
  if (row.outcome === "locked") {
    return { kind: "locked", retryAfter: row.retry_after ?? 1 };
  }
  if (row.outcome === "locked_out" || row.outcome === "gone") {
    return { kind: row.outcome };
  }
  return { kind: "wrong" };
}

function secondStepOf(row: SecondStepRow): SecondStep {
  if (row.outcome !== "accepted") return refusal(row);
  return {
    kind: "accepted",
    account: toAccount(row as AccountRow),
    session: grantOf(row),
    recoveryCodesLeft: row.recovery_codes_left ?? 0,
  };
}

/** The account's columns read from \`app.users u\`. */
const userColumns = accountColumns.split(", ").map((column) => `u.${column}`).join(", ");

/** `call`, a function answering `app.second_step`, and the account it signed in once accepted. */
function secondStepQuery(call: string, values: unknown[]): Query<SecondStepRow, SecondStep> {
  return {
    text: `select step.*, ${userColumns}
           from ${call} step left join app.users u on u.id = $1 and step.outcome = 'accepted'`,
    values,
    read: ([row]) => secondStepOf(row),
  };
}

/** Starts enrolment with `secret`; answers the pending factor's id, or undefined while the account has an active one. */
export function enrollFactor(
  userId: string,
  secret: SealedSecret,
): Query<{ factor_id: string | null }, string | undefined> {
  return {
    text: "select app.enroll_second_factor($1, $2, $3) as factor_id",
    values: [userId, secret.sealed, secret.keyId],
    read: ([row]) => row.factor_id ?? undefined,
  };
}

/** The account's pending factor `factorId`, sealed; undefined when it has none of that id. */
export function pendingFactor(
  userId: string,
  factorId: string,
): Query<{ secret_sealed: string; secret_key_id: string }, SealedSecret | undefined> {
  return {
    text: `select secret_sealed, secret_key_id from app.second_factors
           where user_id = $1 and id::text = lower($2) and activated_at is null`,
    values: [userId, factorId],
    read: ([row]) => row ? { sealed: row.secret_sealed, keyId: row.secret_key_id } : undefined,
  };
}

/**
 * The account's active factor `factorId`, sealed (`app.sealed_factor_secret`): for a factor whose secret tokens do
 * not carry, because it was sealed under `JWT_SECRET` before `MFA_SECRET_KEY` existed.
 */
export function sealedFactorSecret(
  userId: string,
  factorId: string,
): Query<{ sealed: string; key_id: string }, SealedSecret | undefined> {
  return {
    text: "select sealed, key_id from app.sealed_factor_secret($1, $2::uuid)",
    values: [userId, factorId],
    read: ([row]) => row ? { sealed: row.sealed, keyId: row.key_id } : undefined,
  };
}

/** Activates the pending factor with its first code (the step it matched), storing the recovery codes' hashes. */
export function activateFactor(
  input: {
    userId: string;
    factorId: string;
    matchedStep: number | undefined;
    codeHashes: string[];
    session: NewSession;
  },
): Query<SecondStepRow, SecondStep> {
  return secondStepQuery("app.activate_second_factor($1, $2::uuid, $3, $4::text[], $5, $6, $7, $8)", [
    input.userId,
    input.factorId,
    input.matchedStep ?? null,
    input.codeHashes,
    ...sessionValues(input.session),
  ]);
}

/** The second step of a sign-in: the caller's aal1 session ends and an aal2 one starts once the proof is accepted. */
export function passSecondStep(
  input: { userId: string; callerSessionId: string; factorId: string; proof: FactorProof; session: NewSession },
): Query<SecondStepRow, SecondStep> {
  return secondStepQuery("app.pass_second_step($1, $2::uuid, $3::uuid, $4, $5, $6, $7, $8, $9)", [
    input.userId,
    input.callerSessionId,
    input.factorId,
    input.proof.matchedStep ?? null,
    input.proof.recoveryHash ?? null,
    ...sessionValues(input.session),
  ]);
}

/** Who is asking, for the attempt's security events and the sessions it ends. */
interface Asker {
  userId: string;
  callerSessionId: string;
  userAgent: string | undefined;
  address: string | undefined;
}

type AttemptRow = { outcome: "accepted" | "wrong" | "locked" | "gone"; retry_after: number | null };
type Attempt = { kind: "accepted" } | RefusedAttempt;

function attemptOf(row: AttemptRow): Attempt {
  return row.outcome === "accepted" ? { kind: "accepted" } : refusal(row);
}

/** Removes the account's active factor `factorId`, given a current code or a recovery code. */
export function unenrollFactor(input: Asker & { factorId: string; proof: FactorProof }): Query<AttemptRow, Attempt> {
  return {
    text: "select * from app.unenroll_second_factor($1, $2::uuid, $3::uuid, $4, $5, $6, $7)",
    values: [
      input.userId,
      input.callerSessionId,
      input.factorId,
      input.proof.matchedStep ?? null,
      input.proof.recoveryHash ?? null,
      input.userAgent ?? null,
      input.address ?? null,
    ],
    read: ([row]) => attemptOf(row),
  };
}

/** Replaces the account's recovery codes with `codeHashes`, given a current code or a recovery code. */
export function replaceRecoveryCodes(
  input: Asker & { proof: FactorProof; codeHashes: string[] },
): Query<AttemptRow, Attempt> {
  return {
    text: "select * from app.replace_recovery_codes($1, $2::uuid, $3, $4, $5::text[], $6, $7)",
    values: [
      input.userId,
      input.callerSessionId,
      input.proof.matchedStep ?? null,
      input.proof.recoveryHash ?? null,
      input.codeHashes,
      input.userAgent ?? null,
      input.address ?? null,
    ],
    read: ([row]) => attemptOf(row),
  };
}

interface FactorRow {
  id: string | null;
  activated_at: Date | null;
  created_at: Date | null;
  last_used_at: Date | null;
  recovery_codes_left: number;
}

/** The account's factor (at most one), and how many recovery codes it has left. */
export function listFactors(userId: string): Query<FactorRow, { factors: FactorInfo[]; recoveryCodesLeft: number }> {
  return {
    text: `select f.id, f.activated_at, f.created_at, f.last_used_at,
                  (select count(*)::integer from app.recovery_codes r where r.user_id = $1 and r.used_at is null)
                    as recovery_codes_left
           from (select $1::uuid as user_id) owner
           left join app.second_factors f on f.user_id = owner.user_id`,
    values: [userId],
    read: ([row]) => ({
      factors: row.id && row.created_at
        ? [{
          id: row.id,
          type: "totp",
          status: row.activated_at ? "active" : "pending",
          createdAt: row.created_at.toISOString(),
          lastUsedAt: row.last_used_at?.toISOString() ?? null,
        }]
        : [],
      recoveryCodesLeft: row.recovery_codes_left,
    }),
  };
}

/** The outcome of an admin's removal of an account's factor. */
export type FactorRemoval =
  | { kind: "removed"; user: User }
  | { kind: "no-factor" }
  | { kind: "unknown-user" }
  | { kind: "own-account" }
  | { kind: "admin-account" };

/**
 * An admin's removal of another account's lost factor, by the account's id (\`app.admin_remove_second_factor\`):
 * its recovery codes go too, every session of the account ends, and its owner is mailed. Never the admin's own
 * (unenrolling with a code does that) nor another admin's: a stolen admin token must not take factors away.
 */
export function removeSecondFactor(
  id: string,
): Query<Partial<AccountRow> & { outcome: string }, FactorRemoval> {
  return {
    text: `select removal.outcome, ${userColumns}
           from app.admin_remove_second_factor($1::uuid) as removal(outcome)
           left join app.users u on u.id = $1::uuid and removal.outcome = 'removed'`,
    values: [uuidOrNull(id)],
    read: ([row]) => {
      switch (row.outcome) {
        case "removed":
          return { kind: "removed", user: toAccount(row as AccountRow).user };
        case "own_account":
          return { kind: "own-account" };
        case "admin_account":
          return { kind: "admin-account" };
        case "no_factor":
          return { kind: "no-factor" };
        default:
          return { kind: "unknown-user" };
      }
    },
  };
}
