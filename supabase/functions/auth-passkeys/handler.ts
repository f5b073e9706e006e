import { requireCaller } from "../_shared/auth/caller.ts";
import { authenticatorName } from "../_shared/auth/authenticator-names.ts";
import { getConfig } from "../_shared/config/mod.ts";
import {
  type PasskeyAnswer,
  type PasskeyList,
  passkeyQuery,
  type RemovedPasskey,
  renamePasskeyBody,
} from "../_shared/contract/passkeys.ts";
import { withFullCaller, withReauthenticatedCaller } from "../_shared/db/caller-transactions.ts";
import { clientAddress, userAgentOf } from "../_shared/http/client-address.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { ConflictError, NotFoundError } from "../_shared/http/errors.ts";
import { readJsonBody, readQuery } from "../_shared/http/request.ts";
import { listPasskeys, removePasskey, renamePasskey, toPasskeyInfo } from "../_shared/queries/passkey-management.ts";

function passkeyNotFound(): NotFoundError {
  return new NotFoundError("passkey_not_found", "Passkey not found");
}

/**
 * `GET /auth/passkeys`: the caller's passkeys (name, created, last used, whether synced, the authenticator's name
 * where its AAGUID is known). `PATCH /auth/passkeys?id= {name}`: renames one. `DELETE /auth/passkeys?id=`: removes
 * one, from a session that proved its owner within the last 5 minutes (`POST /auth/reauthenticate`, else 403
 * `reauthentication_required`), unless it is the account's last way to sign in (409 `last_sign_in_method`); the
 * owner is mailed.
 */
export const handler = defineEndpoint({
  name: "auth-passkeys",
  envelope: "auth",
  methods: ["GET", "PATCH", "DELETE"],
  queries: { PATCH: passkeyQuery, DELETE: passkeyQuery },
  handle: async (req, info) => {
    const caller = await requireCaller(req);
    const { limits } = getConfig();
    const client = { address: clientAddress(req, info, limits), userAgent: userAgentOf(req) };
    if (req.method === "GET") {
      const rows = await withFullCaller(caller, listPasskeys(caller.sub));
      const data: PasskeyList = { passkeys: rows.map((row) => toPasskeyInfo(row, authenticatorName)) };
      return authSuccess(200, "Passkeys fetched", data);
    }
    if (req.method === "PATCH") {
      // The body first, as every endpoint that takes one reads it: a slow or oversized one is refused as such.
      const { name } = await readJsonBody(req, renamePasskeyBody, limits.bodyTimeoutMs);
      const passkeyId = readQuery(req, passkeyQuery).id.toLowerCase();
      const row = await withFullCaller(caller, renamePasskey({ userId: caller.sub, passkeyId, name, ...client }));
      if (!row) throw passkeyNotFound();
      const data: PasskeyAnswer = { passkey: toPasskeyInfo(row, authenticatorName) };
      return authSuccess(200, "Passkey renamed", data);
    }
    const passkeyId = readQuery(req, passkeyQuery).id.toLowerCase();
    const outcome = await withReauthenticatedCaller(
      caller,
      removePasskey({ userId: caller.sub, passkeyId, ...client }),
    );
    if (outcome === "not_found") throw passkeyNotFound();
    if (outcome === "last_sign_in_method") {
      throw new ConflictError(
        "last_sign_in_method",
        "This passkey is the account's only way to sign in: set a password, link a provider or add a passkey first",
      );
    }
    const data: RemovedPasskey = { id: passkeyId };
    return authSuccess(200, "Passkey removed", data);
  },
});
