import { requireSignedUpCaller } from "../_shared/auth/caller.ts";
import { authenticatorName } from "../_shared/auth/authenticator-names.ts";
import { CeremonyRefused, claimedCeremony, verifiedRegistration } from "../_shared/auth/passkey-ceremonies.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { type PasskeyAnswer, registerPasskeyBody } from "../_shared/contract/passkeys.ts";
import { withReauthenticatedCaller } from "../_shared/db/caller-transactions.ts";
import { clientAddress, userAgentOf } from "../_shared/http/client-address.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { BadRequestError, ConflictError } from "../_shared/http/errors.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { registerPasskey } from "../_shared/queries/passkeys.ts";
import { passkeyLimitReached } from "../auth-passkeys-register-options/handler.ts";

function passkeyInvalid(): BadRequestError {
  const message = "The passkey could not be registered: ask for new options and try again";
  return new BadRequestError(message, [{ field: "response", message }], { code: "passkey_invalid" });
}

/**
 * `POST /auth/passkeys/register {response, name?}`: verifies the browser's new credential (`credential.toJSON()`)
 * against this session's registration challenge and stores it, from a session that proved its owner within the
 * last 5 minutes (else 403 `reauthentication_required`): a stolen token cannot plant its thief's passkey. One round
 * trip: the signature and the client data are checked here, and one statement spends the challenge, checks the proof
 * and the cap of 10, stores the passkey, logs it and mails the owner. 400 `passkey_invalid` for an answer that does
 * not verify, or whose challenge is unknown, used, expired or another session's.
 */
export const handler = defineEndpoint({
  name: "auth-passkeys-register",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const caller = await requireSignedUpCaller(req);
    const { limits, passkeys } = getConfig();
    const { response, name } = await readJsonBody(req, registerPasskeyBody, limits.bodyTimeoutMs);
    const claimed = claimedCeremony(response.response.clientDataJSON);
    if (!claimed) throw passkeyInvalid();
    let passkey;
    try {
      passkey = await verifiedRegistration(passkeys, response, claimed, name);
    } catch (error) {
      if (!(error instanceof CeremonyRefused)) throw error;
      error.log("registration");
      throw passkeyInvalid();
    }
    const registration = await withReauthenticatedCaller(
      caller,
      registerPasskey({
        userId: caller.sub,
        sessionId: caller.session_id,
        challenge: claimed.challenge,
        passkey,
        address: clientAddress(req, info, limits),
        userAgent: userAgentOf(req),
      }),
    );
    if (registration.kind !== "registered") {
      if (registration.kind === "limit_reached") throw passkeyLimitReached();
      if (registration.kind === "already_registered") {
        throw new ConflictError("passkey_exists", "This passkey is registered already");
      }
      throw passkeyInvalid();
    }
    const data: PasskeyAnswer = {
      passkey: {
        id: registration.passkeyId,
        name: passkey.name,
        createdAt: registration.createdAt.toISOString(),
        lastUsedAt: null,
        synced: passkey.deviceType === "multiDevice" && passkey.backedUp,
        authenticator: authenticatorName(passkey.aaguid),
      },
    };
    return authSuccess(201, "Passkey registered", data);
  },
});
