import { requireCaller } from "../_shared/auth/caller.ts";
import { getConfig } from "../_shared/config/mod.ts";
import { completeLinkBody } from "../_shared/contract/identities.ts";
import { withFullCaller } from "../_shared/db/caller-transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { BadRequestError, ConflictError } from "../_shared/http/errors.ts";
import { clientAddress, userAgentOf } from "../_shared/http/client-address.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { signInCodeHashOf } from "../_shared/auth/provider-sign-in.ts";
import { completeIdentityLink } from "../_shared/queries/identities.ts";
import { emailTaken } from "../auth-anonymous-upgrade/handler.ts";

const spentCode = "code is invalid, expired, already used, or of a link another session asked for: link again";

function identityLinkedMail() {
  return {
    subject: "A sign-in method was added to your account",
    body: "A provider's account can now sign in to your notes account. If you did not do this, sign in, unlink it " +
      "in your settings and change your password.",
  };
}

/**
 * `POST /auth/identities/link/complete {code}`: links the identity whose `link_code` the provider's callback put in
 * the app's URL, for the session that asked for the link only: a link URL an attacker hands someone else's browser
 * links nothing. Records the link and mails the owner. An anonymous account's link signs it up under the same id,
 * with the identity's address (verified as the provider says) and name; an address registered since the callback is
 * 409 `email_taken`, and the account stays as it was.
 */
export const handler = defineEndpoint({
  name: "auth-identities-link-complete",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const caller = await requireCaller(req);
    const { jwtSecret, limits } = getConfig();
    const { code } = await readJsonBody(req, completeLinkBody, limits.bodyTimeoutMs);
    const completion = await withFullCaller(
      caller,
      completeIdentityLink({
        codeHash: await signInCodeHashOf(jwtSecret, code),
        userId: caller.sub,
        sessionId: caller.session_id,
        address: clientAddress(req, info, limits),
        userAgent: userAgentOf(req),
        mail: identityLinkedMail(),
      }),
    );
    if (completion.kind === "linked") return authSuccess(200, "Identity linked", completion.identity);
    // An anonymous account's link signs it up with the identity's address, which was registered meanwhile.
    if (completion.kind === "email_taken") throw emailTaken();
    if (completion.kind === "identity_already_linked") {
      throw new ConflictError("identity_already_linked", "This provider identity is linked to another account");
    }
    throw new BadRequestError(spentCode, [{ field: "code", message: spentCode }], { code: "invalid_code" });
  },
});
