import { requireCaller } from "../_shared/auth/caller.ts";
import { checkReenteredPassword, wrongPassword } from "../_shared/auth/reentered-password.ts";
import { withPasswordAdmission } from "../_shared/auth/passwords.ts";
import { proofOf, refusedAttempt } from "../_shared/auth/second-factor-proofs.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { reauthenticateBody, type Reauthentication } from "../_shared/contract/second-factor.ts";
import { withFullCaller } from "../_shared/db/caller-transactions.ts";
import { clientAddress, userAgentOf } from "../_shared/http/client-address.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { reauthenticateWithFactor, reauthenticateWithPassword } from "../_shared/queries/reauthentication.ts";
import { reauthenticateWithPasskey } from "../_shared/queries/passkeys.ts";

/**
 * `POST /auth/reauthenticate {password} | {code} | {recoveryCode} | {passkey}`: the signed-in owner proves it is
 * them (the password, a current code of the factor, one recovery code, or an assertion of one of the account's
 * passkeys for the session's own challenge), and the session may then change how the account
 * signs in for 5 minutes: link or unlink an identity, and, for an account without a password, set one or delete
 * the account. A session's age is no proof: a stolen token minutes old proves nothing. From a session that made the
 * second step where the account has a factor; a wrong password counts against the session's re-entry limit, a wrong
 * code against the factor, as everywhere else.
 */
export const handler = defineEndpoint({
  name: "auth-reauthenticate",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const caller = await requireCaller(req);
    const config = getConfig();
    const body = await readJsonBody(
      req,
      reauthenticateBody,
      config.limits.bodyTimeoutMs,
    );
    const client = {
      address: clientAddress(req, info, config.limits),
      userAgent: userAgentOf(req),
    };
    const session = {
      userId: caller.sub,
      sessionId: caller.session_id,
      ...client,
    };
    let validUntil: Date | undefined;
    if (body.passkey !== undefined) {
      // The WebAuthn verifier is loaded only for a passkey's proof: it doubled this function's cold start, which the
      // proofs by password and by code would otherwise pay too.
      const { checkAssertion, passkeyRejected } = await import("../_shared/auth/passkey-assertions.ts");
      // An assertion for this session's own challenge (POST /auth/passkeys/login/options with its token): the read
      // that finds the credential's key, then the write that moves its counter and records the proof.
      const { use } = await checkAssertion(req, info, body.passkey, caller);
      const outcome = await withFullCaller(caller, reauthenticateWithPasskey({ ...session, use }));
      if (outcome.kind !== "accepted") throw passkeyRejected();
      validUntil = outcome.validUntil;
    } else if (body.password !== undefined) {
      const { password } = body;
      const expectedHash = await withPasswordAdmission(() =>
        checkReenteredPassword(caller, password, {
          ...client,
          via: "reauthenticate",
        })
      );
      validUntil = await withFullCaller(
        caller,
        reauthenticateWithPassword({ ...session, expectedHash }),
      );
      // The password changed between the check and the record: the one given is no longer it.
      if (!validUntil) throw wrongPassword();
    } else {
      const { factorId, proof } = await proofOf(caller, body, config);
      const outcome = await withFullCaller(
        caller,
        reauthenticateWithFactor({ ...session, factorId, proof }),
      );
      if (outcome.kind !== "accepted") {
        throw refusedAttempt(
          outcome,
          body.code === undefined ? "recoveryCode" : "code",
        );
      }
      validUntil = outcome.validUntil;
    }
    const data: Reauthentication = {
      reauthenticatedUntil: validUntil.toISOString(),
    };
    return authSuccess(200, "Reauthenticated", data);
  },
});
