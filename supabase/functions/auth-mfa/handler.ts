import { requireCaller } from "../_shared/auth/caller.ts";
import type { FactorList } from "../_shared/contract/second-factor.ts";
import { withFullCaller } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { listFactors } from "../_shared/queries/second-factors.ts";

/** `GET /auth/mfa`: the account's second factor (at most one, pending or active) and its recovery codes left. */
export const handler = defineEndpoint({
  name: "auth-mfa",
  envelope: "auth",
  methods: ["GET"],
  handle: async (req) => {
    const caller = await requireCaller(req);
    const data: FactorList = await withFullCaller(caller, listFactors(caller.sub));
    return authSuccess(200, "Second factors fetched successfully", data);
  },
});
