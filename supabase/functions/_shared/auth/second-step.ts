/**
 * The second step of a sign-in, as `POST /auth/mfa/verify` (a code of the
 * authenticator) and `POST /auth/mfa/recover` (a recovery code) both make it:
 * the proof is worked out from the caller's token, one statement checks and
 * records it and, once accepted, ends the caller's aal1 session and starts
 * the aal2 one that replaces it.
 *
 * @example
 * ```ts
 * const { session } = await passSecondStepOf(req, info, caller, { code: "123456" });
 * ```
 */
import type { Caller } from "./caller.ts";
import { getConfig } from "../config/mod.ts";
import type { Session } from "../contract/accounts.ts";
import { withLiveCaller } from "../db/caller-transactions.ts";
import { clientAddress, type ConnectionInfo } from "../http/client-address.ts";
import { passSecondStep } from "../queries/second-factors.ts";
import { proofOf, refusedAttempt } from "./second-factor-proofs.ts";
import { newSessionOf, sessionFor } from "./session.ts";

/** The aal2 session that replaces the caller's, and the recovery codes the account has left; else throws the refusal. */
export async function passSecondStepOf(
  req: Request,
  info: ConnectionInfo | undefined,
  caller: Caller,
  body: { code?: string; recoveryCode?: string },
): Promise<{ session: Session; recoveryCodesLeft: number }> {
  const { jwtSecret, limits, sessions } = getConfig();
  const { factorId, proof } = await proofOf(caller, body, getConfig());
  const step = await withLiveCaller(
    caller,
    passSecondStep({
      userId: caller.sub,
      callerSessionId: caller.session_id,
      factorId,
      proof,
      session: newSessionOf(req, clientAddress(req, info, limits), sessions),
    }),
  );
  if (step.kind !== "accepted") throw refusedAttempt(step, body.code === undefined ? "recoveryCode" : "code");
  return {
    session: await sessionFor(step.account, step.session, jwtSecret),
    recoveryCodesLeft: step.recoveryCodesLeft,
  };
}
