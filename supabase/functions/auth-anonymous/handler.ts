import { getConfig } from "../_shared/config/mod.ts";
import { withServiceTransaction } from "../_shared/db/transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { clientAddress } from "../_shared/http/client-address.ts";
import { insertAnonymousUser } from "../_shared/queries/anonymous.ts";
import { asTooManyRequests, requireAddressLimit } from "../_shared/queries/rate-limits.ts";
import { newSessionOf, sessionFor } from "../_shared/auth/session.ts";

/** The 429 message of the per-address limit of new anonymous accounts. */
export const tooManyAnonymousAccounts = "Too many anonymous accounts from this address; try again later";

/**
 * `POST /auth/anonymous`: starts an account with no email and no password
 * (`isAnonymous: true`) and signs it in, as login answers. The body, if any, is
 * not read.
 */
export const handler = defineEndpoint({
  name: "auth-anonymous",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const { jwtSecret, limits, sessions } = getConfig();
    const address = clientAddress(req, info, limits);
    // The per-address limit is counted in the same round trip as the account, and a refused start counts nothing.
    const { account, session } = await withServiceTransaction(
      insertAnonymousUser(newSessionOf(req, address, sessions)),
      requireAddressLimit("anonymous-address", address, limits),
    ).catch(asTooManyRequests(tooManyAnonymousAccounts));
    return authSuccess(201, "Anonymous session started", await sessionFor(account, session, jwtSecret));
  },
});
