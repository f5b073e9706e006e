/**
 * Transactions on behalf of a signed-in caller: the opening statement takes on
 * the caller's role and claims and checks in Postgres that the caller may act
 * (a live session, an active account, a verified address where required, the
 * second factor where the account has one, the admin role for admin work),
 * all in the transaction's one round trip.
 *
 * @example
 * ```ts
 * const note = await withCallerTransaction(caller, insertNote(caller.sub, body));
 * ```
 */
import { ForbiddenError, InvalidTokenError } from "../http/errors.ts";
import { pgErrorCode } from "./errors.ts";
import { type Query, type Statement, withServiceTransaction } from "./transactions.ts";

/** Claims as PostgREST hands them to Postgres in `request.jwt.claims`. */
export interface CallerClaims {
  sub: string;
  role: "authenticated";
  [claim: string]: unknown;
}

/** SQLSTATE of `app.require_active_caller()`: the token is revoked or its user inactive or gone. */
const revokedCaller = "PT401";
/** SQLSTATE of `app.require_notes_caller()`: the database requires a verified address and the caller's is not. */
const unverifiedCaller = "PT403";
/** SQLSTATE of `app.require_admin()`: the caller's account does not have the role ADMIN. */
const notAdmin = "PTADM";
/** SQLSTATE of the opening statements: the account has a second factor and the caller's session has not made it. */
const secondFactorRequired = "PTMFA";

/** SQLSTATE of `app.require_reauthenticated_caller()`: the change needs a proof the session has not given lately. */
const reauthenticationRequired = "PTRAU";

/** The message of 403 `reauthentication_required`: what the caller must do. */
export const reauthenticationRequiredMessage =
  "Confirm it is you first: POST /auth/reauthenticate with the password or a code, then retry within 5 minutes";

/** The message of 403 `mfa_required`: what the caller must do. */
export const mfaRequiredMessage =
  "Second factor required: send a code of the authenticator app to POST /auth/mfa/verify";
/** SQLSTATE of a write that refers to a row that is gone. */
const foreignKeyViolation = "23503";

/**
 * Runs `query` in a transaction as role `authenticated` with the caller's JWT
 * claims set locally, in one statement as PostgREST does, so `auth.uid()` and
 * the notes policies see the caller. The same statement checks in Postgres
 * that the caller still exists, is ACTIVE, holds a token of the account's
 * current version and that the token's session is live; if not, `query`
 * never takes effect and this throws a 401. While the database requires
 * verified addresses (`app.settings`, REQUIRE_EMAIL_VERIFICATION) it also
 * requires the caller's (else 403), as the notes policies do for every route.
 * A query that writes notes (`writesNotes`) first locks the caller's account
 * row, so a deletion of the account racing it waits or is waited for, never
 * deadlocks. All of it is one round trip.
 */
export function withCallerTransaction<Row, Result>(
  claims: CallerClaims,
  query: Query<Row, Result>,
): Promise<Result> {
  return guardedByCaller(query, notesCallerCheck(claims, query.writesNotes ?? false)).catch((error) => {
    // The account was deleted after the check passed, before a write that refers to it (its note count, a create
    // key): as for a token of an account that is gone.
    if (pgErrorCode(error) === foreignKeyViolation) throw new InvalidTokenError("token_revoked");
    throw error;
  });
}

/**
 * The statement that opens a notes transaction: the caller's role and claims
 * taken on, and the check that they may read notes, or write them.
 */
export function notesCallerCheck(claims: CallerClaims, writesNotes: boolean): Statement {
  // The CTE holds volatile calls, so Postgres runs it (and sets the claims) before the check reads them.
  return {
    text: `with session as (
             select set_config('role', 'authenticated', true),
                    set_config('request.jwt.claims', $1, true)
           )
           select app.${writesNotes ? "require_notes_writer" : "require_notes_caller"}() from session`,
    values: [JSON.stringify(claims)],
  };
}

/**
 * Runs `query` as the connection's own role (for the account tables), behind
 * the check that the caller is signed in (`app.require_active_caller()`), in
 * one round trip: the calls a session that has not made its second step may
 * make too (the user record, a local sign-out, the second step itself).
 */
export function withLiveCaller<Row, Result>(
  claims: CallerClaims,
  query: Query<Row, Result>,
  ...guards: Statement[]
): Promise<Result> {
  return guardedByCaller(query, callerCheck("app.require_active_caller", claims), ...guards);
}

/**
 * As `withLiveCaller`, behind `app.require_full_caller()`: the caller's
 * session has also made the second step where the account has a factor (else
 * 403 `mfa_required`). The account calls: sessions, password, deletion,
 * security log, the factor's management.
 */
export function withFullCaller<Row, Result>(
  claims: CallerClaims,
  query: Query<Row, Result>,
  ...guards: Statement[]
): Promise<Result> {
  return guardedByCaller(query, callerCheck("app.require_full_caller", claims), ...guards);
}

/**
 * As `withFullCaller`, behind `app.require_reauthenticated_caller()`: the
 * caller's session has also given a proof within the last 5 minutes (`POST
 * /auth/reauthenticate`), else 403 `reauthentication_required`. The changes of
 * how an account signs in whose body carries no proof of their own.
 */
export function withReauthenticatedCaller<Row, Result>(
  claims: CallerClaims,
  query: Query<Row, Result>,
): Promise<Result> {
  return guardedByCaller(
    query,
    callerCheck("app.require_reauthenticated_caller", claims),
  );
}

/**
 * As `withLiveCaller`, behind `app.require_notes_caller()`: the checks the notes policies make (active, verified
 * where required, the second step where the account has a factor), for a write the API role is not granted, so
 * the Data API cannot make it with any claims. Its statement names the caller's rows itself.
 */
export function withNotesCallerAsService<Row, Result>(claims: CallerClaims, query: Query<Row, Result>) {
  return guardedByCaller(query, callerCheck("app.require_notes_caller", claims));
}

function callerCheck(
  check:
    | "app.require_notes_caller"
    | "app.require_active_caller"
    | "app.require_full_caller"
    | "app.require_reauthenticated_caller",
  claims: CallerClaims,
): Statement {
  return {
    text: `with session as (select set_config('request.jwt.claims', $1, true)) select ${check}() from session`,
    values: [JSON.stringify(claims)],
  };
}

/** Where an admin's request comes from, recorded with the security events its statement causes. */
export interface AdminContext {
  address: string | undefined;
  userAgent: string | undefined;
}

/**
 * Runs `query` as the connection's own role behind `app.require_admin()`: the
 * caller's session must be live and its account ACTIVE and an ADMIN now, read
 * in the same round trip, so a revoked admin is refused on its next request
 * (403 `admin_required`) whatever its token says. The same statement names the
 * admin as the actor of every security event the query causes.
 */
export function withAdminCaller<Row, Result>(
  claims: CallerClaims,
  context: AdminContext,
  query: Query<Row, Result>,
): Promise<Result> {
  return guardedByCaller(query, {
    text: `with acting as (
             select set_config('request.jwt.claims', $1, true),
                    set_config('app.audit_actor', $2, true),
                    set_config('app.audit_address', $3, true),
                    set_config('app.audit_user_agent', $4, true)
           )
           select app.require_admin() from acting`,
    values: [JSON.stringify(claims), claims.sub, context.address ?? "", context.userAgent ?? ""],
  });
}

async function guardedByCaller<Row, Result>(
  query: Query<Row, Result>,
  callerCheck: Statement,
  ...guards: Statement[]
): Promise<Result> {
  try {
    return await withServiceTransaction(query, callerCheck, ...guards);
  } catch (error) {
    if (pgErrorCode(error) === revokedCaller) throw new InvalidTokenError("token_revoked");
    if (pgErrorCode(error) === unverifiedCaller) {
      // The same SQLSTATE (PostgREST's 403) from the triggers that keep an anonymous account's limits.
      const signUp = signUpRequired(error);
      if (signUp) throw signUp;
      throw new ForbiddenError("email_not_verified", "Email address not verified");
    }
    if (pgErrorCode(error) === notAdmin) {
      throw new ForbiddenError("admin_required", "Admin role required");
    }
    if (pgErrorCode(error) === secondFactorRequired) {
      throw new ForbiddenError("mfa_required", mfaRequiredMessage);
    }
    if (pgErrorCode(error) === reauthenticationRequired) {
      throw new ForbiddenError(
        "reauthentication_required",
        reauthenticationRequiredMessage,
      );
    }
    throw error;
  }
}

/** The 403 of an anonymous account that asks for a second factor or a passkey. */
export function signUpBeforeAddingFactors(): ForbiddenError {
  return new ForbiddenError("sign_up_required", "Sign up before adding a second factor or a passkey");
}

/** What the anonymous account's limits (migration 20261128000800) refused, as a 403 that says to sign up. */
function signUpRequired(error: unknown): ForbiddenError | undefined {
  const message = error instanceof Error ? error.message : "";
  if (message === "anonymous_note_limit") {
    return new ForbiddenError("sign_up_required", "An anonymous account keeps a limited number of notes; sign up");
  }
  if (message === "anonymous_attachment") {
    return new ForbiddenError("sign_up_required", "Sign up before attaching files");
  }
  if (message === "anonymous_account") return signUpBeforeAddingFactors();
  return undefined;
}
