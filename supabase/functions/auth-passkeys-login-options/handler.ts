import { requireCaller } from "../_shared/auth/caller.ts";
import { challengeSeconds, optionsJson, signInOptions } from "../_shared/auth/passkey-ceremonies.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { type PasskeyOptions, passkeyOptionsBody } from "../_shared/contract/passkeys.ts";
import { withLiveCaller } from "../_shared/db/caller-transactions.ts";
import { withServiceTransaction } from "../_shared/db/transactions.ts";
import { clientAddress } from "../_shared/http/client-address.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { TooManyRequestsError } from "../_shared/http/errors.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { startChallenge } from "../_shared/queries/passkeys.ts";

/**
 * `POST /auth/passkeys/login/options`: the request options of a passkey ceremony. Without `Authorization`, a
 * usernameless sign-in: no account is named and any discoverable passkey may answer, so the browser can offer them
 * in the email field's autofill (conditional UI). With a session's token, a ceremony of that session, restricted
 * to its account's passkeys: the second step of a password sign-in (`mfaRequired`), or a proof for
 * `POST /auth/reauthenticate {passkey}`. The challenge is good for one answer, for 5 minutes; options are
 * rate-limited per address (the login's numbers).
 */
export const handler = defineEndpoint({
  name: "auth-passkeys-login-options",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const caller = req.headers.has("authorization") ? await requireCaller(req) : undefined;
    const { limits, passkeys } = getConfig();
    await readJsonBody(req, passkeyOptionsBody, limits.bodyTimeoutMs);
    const draft = await signInOptions(passkeys, []);
    const store = startChallenge({
      purpose: caller ? "session" : "sign_in",
      challenge: draft.challenge,
      userId: caller?.sub,
      sessionId: caller?.session_id,
      address: clientAddress(req, info, limits),
      windowSeconds: limits.loginAddressWindowSeconds,
      maxPerAddress: limits.loginMaxAttemptsPerAddress,
    });
    const start = caller ? await withLiveCaller(caller, store) : await withServiceTransaction(store);
    if (start.kind !== "started") {
      const retryAfter = start.kind === "throttled" ? start.retryAfter : 1;
      throw new TooManyRequestsError("Too many passkey ceremonies from this address; try again later", retryAfter);
    }
    const options = caller
      ? { ...draft, allowCredentials: start.credentialIds.map((id) => ({ id, type: "public-key" })) }
      : draft;
    const data: PasskeyOptions = {
      options: optionsJson(options),
      expiresAt: new Date(Date.now() + challengeSeconds * 1000).toISOString(),
    };
    return authSuccess(200, "Passkey sign-in options", data);
  },
});
