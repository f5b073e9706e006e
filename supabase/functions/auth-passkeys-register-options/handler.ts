import { requireSignedUpCaller } from "../_shared/auth/caller.ts";
import { challengeSeconds, optionsJson, registrationOptions } from "../_shared/auth/passkey-ceremonies.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { type PasskeyOptions, passkeyOptionsBody, passkeysMax } from "../_shared/contract/passkeys.ts";
import { withReauthenticatedCaller } from "../_shared/db/caller-transactions.ts";
import { clientAddress } from "../_shared/http/client-address.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { ConflictError, TooManyRequestsError } from "../_shared/http/errors.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { startChallenge } from "../_shared/queries/passkeys.ts";

/** The 409 of an account that has as many passkeys as it may. */
export function passkeyLimitReached(): ConflictError {
  return new ConflictError(
    "passkey_limit_reached",
    `The account has ${passkeysMax} passkeys, the most it may have: remove one first`,
  );
}

/**
 * `POST /auth/passkeys/register/options`: the creation options of a new passkey for the signed-in account
 * (discoverable, user verification required, no attestation, none of the account's passkeys again), from a session
 * that proved its owner within the last 5 minutes (`POST /auth/reauthenticate`, else 403
 * `reauthentication_required`). The challenge inside is good for one registration, for 5 minutes, from this session;
 * options are rate-limited per address (the login's numbers).
 */
export const handler = defineEndpoint({
  name: "auth-passkeys-register-options",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const caller = await requireSignedUpCaller(req);
    const { limits, passkeys } = getConfig();
    await readJsonBody(req, passkeyOptionsBody, limits.bodyTimeoutMs);
    // The challenge is made before the statement that stores it, so the statement also answers what the options
    // exclude: one round trip.
    const user = { id: caller.sub, email: caller.email, name: caller.email };
    const draft = await registrationOptions(passkeys, user, []);
    const start = await withReauthenticatedCaller(
      caller,
      startChallenge({
        purpose: "register",
        challenge: draft.challenge,
        userId: caller.sub,
        sessionId: caller.session_id,
        address: clientAddress(req, info, limits),
        windowSeconds: limits.loginAddressWindowSeconds,
        maxPerAddress: limits.loginMaxAttemptsPerAddress,
      }),
    );
    if (start.kind === "limit_reached") throw passkeyLimitReached();
    if (start.kind === "throttled") {
      throw new TooManyRequestsError(
        "Too many passkey ceremonies from this address; try again later",
        start.retryAfter,
      );
    }
    const options = { ...draft, excludeCredentials: start.credentialIds.map((id) => ({ id, type: "public-key" })) };
    const data: PasskeyOptions = {
      options: optionsJson(options),
      expiresAt: new Date(Date.now() + challengeSeconds * 1000).toISOString(),
    };
    return authSuccess(200, "Passkey registration options", data);
  },
});
