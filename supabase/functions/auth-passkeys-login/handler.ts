import { requireCaller } from "../_shared/auth/caller.ts";
import { checkAssertion, refusedPasskeySession } from "../_shared/auth/passkey-assertions.ts";
import { newSessionOf, sessionFor } from "../_shared/auth/session.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { passkeyLoginBody } from "../_shared/contract/passkeys.ts";
import { withLiveCaller } from "../_shared/db/caller-transactions.ts";
import { withServiceTransaction } from "../_shared/db/transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { passSecondStepWithPasskey, signInWithPasskey } from "../_shared/queries/passkeys.ts";

/**
 * `POST /auth/passkeys/login {response}` (`credential.toJSON()` of the browser): without `Authorization`, signs in
 * with the passkey, no email typed, and answers a session as login does (refresh token, device token), at `aal2`
 * with `amr` passkey: a passkey that verified its user proves two factors, so an account with a TOTP factor is not
 * asked for a code on top. With the token of a session waiting for its second step (`mfaRequired`), completes that
 * step as a code does: the aal1 session ends and an aal2 one answers in its place. Two round trips: the read that
 * spends the challenge and finds the credential's public key (a ceremony must read before it can verify), then
 * the write that moves the counter (a device-bound key whose counter goes back is refused and logged) and starts
 * the session. 401 `passkey_rejected` whatever was wrong.
 */
export const handler = defineEndpoint({
  name: "auth-passkeys-login",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const caller = req.headers.has("authorization") ? await requireCaller(req) : undefined;
    const { jwtSecret, limits, sessions } = getConfig();
    const { response } = await readJsonBody(req, passkeyLoginBody, limits.bodyTimeoutMs);
    const { use, userId, client } = await checkAssertion(req, info, response, caller);
    const session = newSessionOf(req, client.address, sessions);
    const outcome = caller
      ? await withLiveCaller(
        caller,
        passSecondStepWithPasskey({ use, userId, callerSessionId: caller.session_id, session }),
      )
      : await withServiceTransaction(signInWithPasskey({ use, session }));
    if (outcome.kind !== "accepted") throw refusedPasskeySession(outcome.kind);
    const answer = await sessionFor(outcome.account, outcome.session, jwtSecret);
    return authSuccess(200, caller ? "Second factor verified" : "Login successful", answer);
  },
});
