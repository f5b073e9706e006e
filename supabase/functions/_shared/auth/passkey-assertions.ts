/**
 * An assertion of a passkey, as a sign-in, a second step and a proof all
 * check it: the read that spends the challenge and finds the credential
 * (a ceremony must read the public key before it can verify), then the
 * signature, checked here. Whatever is wrong, the answer is one 401
 * `passkey_rejected`; a wrong signature of a known credential counts against
 * its account's cap of failed sign-ins, recorded after the answer as a wrong
 * password is.
 *
 * @example
 * ```ts
 * const { use } = await checkAssertion(req, info, response, { purpose: "sign_in" });
 * ```
 */
import { getConfig } from "../config/mod.ts";
import type { AuthenticationResponse } from "../contract/passkeys.ts";
import { withLiveCaller } from "../db/caller-transactions.ts";
import { withServiceTransaction } from "../db/transactions.ts";
import { afterResponse } from "../http/after-response.ts";
import { clientAddress, type ConnectionInfo, userAgentOf } from "../http/client-address.ts";
import { ForbiddenError, UnauthorizedError } from "../http/errors.ts";
import { beginAssertion, type PasskeySession, recordPasskeyFailure, type VerifiedUse } from "../queries/passkeys.ts";
import type { Caller } from "./caller.ts";
import { CeremonyRefused, claimedCeremony, verifiedAssertion } from "./passkey-ceremonies.ts";

/** The one refusal of an assertion: nothing says whether the credential, the challenge or the signature was wrong. */
export function passkeyRejected(): UnauthorizedError {
  return new UnauthorizedError("passkey_rejected", "The passkey was not accepted: start again");
}

/** A verified assertion: what Postgres records, and whose account it is. */
export interface CheckedAssertion {
  use: VerifiedUse;
  userId: string;
  client: { address: string | undefined; userAgent: string | undefined };
}

/**
 * Spends the challenge, reads the credential and verifies the assertion: for a usernameless sign-in (no caller) or
 * for the caller's session (its own challenge, one of its account's passkeys). Throws 401 `passkey_rejected`.
 */
export async function checkAssertion(
  req: Request,
  info: ConnectionInfo | undefined,
  response: AuthenticationResponse,
  caller: Caller | undefined,
): Promise<CheckedAssertion> {
  const { limits, passkeys } = getConfig();
  const client = { address: clientAddress(req, info, limits), userAgent: userAgentOf(req) };
  const claimed = claimedCeremony(response.response.clientDataJSON);
  if (!claimed) throw passkeyRejected();
  const read = beginAssertion({
    challenge: claimed.challenge,
    purpose: caller ? "session" : "sign_in",
    userId: caller?.sub,
    sessionId: caller?.session_id,
    credentialId: response.id,
  });
  const start = caller ? await withLiveCaller(caller, read) : await withServiceTransaction(read);
  if (start.kind !== "found") throw passkeyRejected();
  try {
    const use = await verifiedAssertion(passkeys, response, claimed, start.passkey);
    return { use, userId: start.passkey.userId, client };
  } catch (error) {
    if (!(error instanceof CeremonyRefused)) throw error;
    error.log("assertion");
    afterResponse("passkey failure record", () =>
      withServiceTransaction(recordPasskeyFailure({
        userId: start.passkey.userId,
        reason: "assertion_refused",
        accountWindowSeconds: limits.loginAccountWindowSeconds,
        ...client,
      })));
    throw passkeyRejected();
  }
}

/** The refusal of a verified assertion that Postgres did not accept: a counter gone back, a suspended account. */
export function refusedPasskeySession(outcome: Exclude<PasskeySession["kind"], "accepted">): Error {
  if (outcome === "suspended") return new ForbiddenError("account_suspended", "Account is suspended");
  return passkeyRejected();
}
