import { requireCaller } from "../_shared/auth/caller.ts";
import { verifyAccessToken } from "../_shared/auth/access-tokens.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { mergeAnonymousBody } from "../_shared/contract/accounts.ts";
import { withFullCaller } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { ConflictError, ForbiddenError, InvalidTokenError } from "../_shared/http/errors.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { mergeAnonymous } from "../_shared/queries/anonymous.ts";

/**
 * `POST /auth/anonymous/merge`: signed in to an existing account, moves every
 * note of an anonymous session's account into it and deletes the anonymous
 * account, in one transaction. The proof is the anonymous session's access
 * token: the app holds it already, its signature is checked with no read, it
 * lasts two hours, and Postgres checks that its session is still live. A retry
 * finds the anonymous account gone and moves nothing (`moved: 0`).
 */
export const handler = defineEndpoint({
  name: "auth-anonymous-merge",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req) => {
    const caller = await requireCaller(req);
    const { jwtSecret, limits } = getConfig();
    const { anonymousAccessToken } = await readJsonBody(req, mergeAnonymousBody, limits.bodyTimeoutMs);
    const anonymous = await verifyAccessToken(anonymousAccessToken.replace(/^(Bearer +)+/i, ""), jwtSecret);
    const { outcome, moved } = await withFullCaller(
      caller,
      mergeAnonymous({
        target: caller.sub,
        anonymous: { sub: anonymous.sub, sessionId: anonymous.session_id, tokenVersion: anonymous.token_version },
      }),
    );
    if (outcome === "not_anonymous") {
      throw new ConflictError("not_anonymous", "The token is not an anonymous account's, or is the caller's own");
    }
    if (outcome === "target_anonymous") {
      // Notes moved into another anonymous account would pass its note cap, which only creates check.
      throw new ForbiddenError("sign_up_required", "Sign up before merging another account's notes into this one");
    }
    if (outcome === "revoked") throw new InvalidTokenError("token_revoked", "The anonymous session has ended");
    return authSuccess(200, moved > 0 ? "Notes merged" : "Nothing to merge", { moved });
  },
});
