import { getConfig } from "../_shared/config/mod.ts";
import { refreshBody } from "../_shared/contract/accounts.ts";
import { withServiceTransaction } from "../_shared/db/transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { InvalidRefreshTokenError } from "../_shared/http/errors.ts";
import { clientAddress } from "../_shared/http/client-address.ts";
import { asTooManyRequests, requireAddressLimit } from "../_shared/queries/rate-limits.ts";
import { type Refresh, refreshSession } from "../_shared/queries/sessions.ts";
import { readRefreshToken } from "../_shared/auth/refresh-tokens.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { sessionFor } from "../_shared/auth/session.ts";

/** The 429 message of the per-address refresh limit. */
export const tooManyRefreshes = "Too many session refreshes from this address; try again later";

/** The 401 `code` of each way a refresh can fail. */
const refusals = {
  invalid: "refresh_token_invalid",
  expired: "session_expired",
  revoked: "session_revoked",
  reused: "refresh_token_reused",
} as const satisfies Record<Exclude<Refresh["kind"], "refreshed">, string>;

/** `POST /auth/refresh`: trades a refresh token for a new access token and the session's next refresh token. */
export const handler = defineEndpoint({
  name: "auth-refresh",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const { jwtSecret, limits, sessions } = getConfig();
    const { refreshToken } = await readJsonBody(req, refreshBody, limits.bodyTimeoutMs);
    // A token this service did not make is refused here, before the database and without touching any session.
    const presented = await readRefreshToken(refreshToken, jwtSecret);
    const outcome = await withServiceTransaction(
      refreshSession({ ...presented, settings: sessions }),
      requireAddressLimit("refresh-address", clientAddress(req, info, limits), limits),
    ).catch(asTooManyRequests(tooManyRefreshes));
    if (outcome.kind !== "refreshed") throw new InvalidRefreshTokenError(refusals[outcome.kind]);
    return authSuccess(200, "Session refreshed", await sessionFor(outcome.account, outcome.session, jwtSecret));
  },
});
