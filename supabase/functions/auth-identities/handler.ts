import { requireCaller } from "../_shared/auth/caller.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { type UnlinkedIdentity, unlinkIdentityQuery } from "../_shared/contract/identities.ts";
import { withFullCaller, withReauthenticatedCaller } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { ConflictError, NotFoundError } from "../_shared/http/errors.ts";
import { clientAddress, userAgentOf } from "../_shared/http/client-address.ts";
import { readQuery } from "../_shared/http/request.ts";
import { listIdentities, unlinkIdentity } from "../_shared/queries/identities.ts";

/**
 * `GET /auth/identities`: the caller's linked provider identities and whether the account has a password.
 * `DELETE /auth/identities?id=`: unlinks one, unless it is the account's last way to sign in (409
 * `last_sign_in_method`: set a password with a reset code, or link another provider, first), from a session that
 * proved its owner within the last 5 minutes (`POST /auth/reauthenticate`, else 403 `reauthentication_required`):
 * a stolen token must not remove the owner's way in. The owner is mailed.
 */
export const handler = defineEndpoint({
  name: "auth-identities",
  envelope: "auth",
  methods: ["GET", "DELETE"],
  queries: { DELETE: unlinkIdentityQuery },
  handle: async (req, info) => {
    const caller = await requireCaller(req);
    if (req.method === "GET") {
      return authSuccess(200, "Identities fetched", await withFullCaller(caller, listIdentities(caller.sub)));
    }
    const { id } = readQuery(req, unlinkIdentityQuery);
    const outcome = await withReauthenticatedCaller(
      caller,
      unlinkIdentity({
        userId: caller.sub,
        identityId: id.toLowerCase(),
        address: clientAddress(req, info, getConfig().limits),
        userAgent: userAgentOf(req),
      }),
    );
    if (outcome === "not_found") throw new NotFoundError("identity_not_found", "Identity not found");
    if (outcome === "last_sign_in_method") {
      throw new ConflictError(
        "last_sign_in_method",
        "This is the account's only way to sign in: set a password or link another provider first",
      );
    }
    const data: UnlinkedIdentity = { id: id.toLowerCase() };
    return authSuccess(200, "Identity unlinked", data);
  },
});
