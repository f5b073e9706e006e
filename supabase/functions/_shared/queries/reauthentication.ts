/**
 * SQL of a proof given for a change of how an account signs in (`POST
 * /auth/reauthenticate`): recorded on the caller's session, which then may
 * link or unlink an identity (and, without a password, change it or delete the
 * account) for 5 minutes. Each is one statement.
 *
 * @example
 * ```ts
 * const until = await withFullCaller(caller, reauthenticateWithPassword({ userId, sessionId, expectedHash }));
 * ```
 */
import type { Query } from "../db/transactions.ts";
import { type FactorProof, refusal, type RefusedAttempt } from "./second-factors.ts";

/** Where a request came from, for the security log. */
interface Client {
  address: string | undefined;
  userAgent: string | undefined;
}

/**
 * Records the password, checked by the function against `expectedHash`, as the session's proof; undefined when the
 * hash is no longer the account's (the password changed since it was checked).
 */
export function reauthenticateWithPassword(
  input: { userId: string; sessionId: string; expectedHash: string } & Client,
): Query<{ valid_until: Date | null }, Date | undefined> {
  return {
    text: "select app.record_reauthentication($1, $2::uuid, 'password', $3, $4, $5) as valid_until",
    values: [
      input.userId,
      input.sessionId,
      input.expectedHash,
      input.address ?? null,
      input.userAgent ?? null,
    ],
    read: ([row]) => row.valid_until ?? undefined,
  };
}

/** The outcome of a proof with the factor: accepted until a time, or the attempt's refusal. */
export type FactorReauthentication =
  | { kind: "accepted"; validUntil: Date }
  | RefusedAttempt;

/** One attempt at the account's factor (`app.reauthenticate_with_factor`), counted as any; once accepted, recorded. */
export function reauthenticateWithFactor(
  input: {
    userId: string;
    sessionId: string;
    factorId: string;
    proof: FactorProof;
  } & Client,
): Query<
  {
    outcome: "accepted" | "wrong" | "locked" | "locked_out" | "gone";
    retry_after: number | null;
    valid_until: Date | null;
  },
  FactorReauthentication
> {
  return {
    text: `select outcome, retry_after, valid_until
           from app.reauthenticate_with_factor($1, $2::uuid, $3::uuid, $4, $5, $6, $7)`,
    values: [
      input.userId,
      input.sessionId,
      input.factorId,
      input.proof.matchedStep ?? null,
      input.proof.recoveryHash ?? null,
      input.address ?? null,
      input.userAgent ?? null,
    ],
    read: ([row]) => {
      if (row.outcome === "accepted" && row.valid_until) {
        return { kind: "accepted", validUntil: row.valid_until };
      }
      return refusal(row);
    },
  };
}
