/**
 * SQL of an anonymous account's sign-up with a code mailed to its address
 * (migration 20261129000520): asking for the code, and using it, each one
 * statement behind the caller check, so each request is one round trip.
 *
 * @example
 * ```ts
 * const outcome = await withFullCaller(caller, requestUpgradeCode({ userId: caller.sub, email, codeHash, ... }));
 * ```
 */
import type { SecurityLimits } from "../config/mod.ts";
import type { Query } from "../db/transactions.ts";
import { type Account, type AccountRow, toAccount } from "./account-rows.ts";
import {
  grantOf,
  type NewSession,
  type SessionColumns,
  type SessionGrant,
  sessionValues,
  startSessionCall,
} from "./sessions.ts";
import { signInCodeMaxWrong, signInCodeWindowSeconds } from "./sign-in-codes.ts";

/** What asking for an upgrade code did. */
export type UpgradeCodeRequest = "sent" | "throttled" | "email_taken" | "not_anonymous";

/**
 * Stores a code (its HMAC) for the anonymous account `userId` to sign up
 * with `email`, ending its last one, and queues its mail, within the
 * verification mails' limits per account and per address.
 */
export function requestUpgradeCode(
  input: {
    userId: string;
    email: string;
    codeHash: string;
    ttlMinutes: number;
    mail: { subject: string; body: string };
    limits: Pick<SecurityLimits, "verificationMailMinIntervalSeconds" | "verificationMailsPerDay">;
  },
): Query<{ outcome: UpgradeCodeRequest }, UpgradeCodeRequest> {
  const { limits, mail } = input;
  return {
    text: "select app.request_upgrade_code($1, $2, $3, $4, $5, $6, $7, $8) as outcome",
    values: [
      input.userId,
      input.email,
      input.codeHash,
      input.ttlMinutes,
      limits.verificationMailMinIntervalSeconds,
      limits.verificationMailsPerDay,
      mail.subject,
      mail.body,
    ],
    read: ([row]) => row.outcome,
  };
}

/** The outcome of signing up with an upgrade code. */
export type CodeUpgrade =
  | { kind: "throttled"; retryAfter: number }
  | { kind: "bad-code" | "email_taken" | "not_anonymous" }
  | { kind: "upgraded"; account: Account; session: SessionGrant };

/**
 * Signs the anonymous account `userId` up with the code mailed to `email`
 * (`app.upgrade_anonymous_with_code`): the same id, the name, the address
 * verified, no password; and starts a session that takes the caller's
 * session's level. A wrong code counts against the address, and that commits.
 */
export function upgradeAnonymousWithCode(
  input: {
    userId: string;
    callerSessionId: string;
    email: string;
    name: string;
    codeHash: string;
    session: NewSession;
  },
): Query<
  Partial<AccountRow & SessionColumns> & { outcome: CodeUpgrade["kind"]; retry_after: number | null },
  CodeUpgrade
> {
  return {
    text: `with upgraded as (
             select * from app.upgrade_anonymous_with_code($1, $2, $3, $4, $5, $6)
           ), started as (
             select s.* from upgraded
             cross join lateral ${startSessionCall("upgraded.id", 7, { inheritFrom: "$11::uuid" })} s
             where upgraded.outcome = 'upgraded'
           )
           select upgraded.*, started.* from upgraded left join started on true`,
    values: [
      input.userId,
      input.email,
      input.codeHash,
      input.name,
      signInCodeMaxWrong,
      signInCodeWindowSeconds,
      ...sessionValues(input.session),
      input.callerSessionId,
    ],
    read: ([row]) => {
      if (row.outcome === "upgraded") {
        return { kind: "upgraded", account: toAccount(row as AccountRow), session: grantOf(row as SessionColumns) };
      }
      if (row.outcome === "throttled") return { kind: "throttled", retryAfter: row.retry_after ?? 1 };
      return { kind: row.outcome } as CodeUpgrade;
    },
  };
}
