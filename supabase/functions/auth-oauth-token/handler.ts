import { getConfig } from "../_shared/config/mod.ts";
import { oauthTokenBody } from "../_shared/contract/identities.ts";
import { withServiceTransaction } from "../_shared/db/transactions.ts";
import { defineEndpoint } from "../_shared/http/endpoint.ts";
import { authSuccess } from "../_shared/http/envelopes.ts";
import { BadRequestError } from "../_shared/http/errors.ts";
import { clientAddress } from "../_shared/http/client-address.ts";
import { readJsonBody } from "../_shared/http/request.ts";
import { challengeOf, signInCodeHashOf } from "../_shared/auth/provider-sign-in.ts";
import { newSessionOf, sessionFor } from "../_shared/auth/session.ts";
import { exchangeSignInCode } from "../_shared/queries/identities.ts";

const spentCode =
  "code is invalid, expired, already used, or not of this app's codeVerifier: sign in with the provider again";

/**
 * `POST /auth/oauth/token {code}`: exchanges the one-time code the provider sign-in's callback put in the app's URL
 * (60 seconds, once) for a session, answered as login's: an account with a second factor gets `mfaRequired`. A
 * sign-in started with a `code_challenge` needs its `codeVerifier`; one started without refuses any.
 */
export const handler = defineEndpoint({
  name: "auth-oauth-token",
  envelope: "auth",
  methods: ["POST"],
  handle: async (req, info) => {
    const { jwtSecret, limits, sessions } = getConfig();
    const { code, codeVerifier } = await readJsonBody(req, oauthTokenBody, limits.bodyTimeoutMs);
    const signedIn = await withServiceTransaction(exchangeSignInCode({
      codeHash: await signInCodeHashOf(jwtSecret, code),
      verifierChallenge: codeVerifier === undefined ? undefined : await challengeOf(codeVerifier),
      session: newSessionOf(req, clientAddress(req, info, limits), sessions),
    }));
    if (!signedIn) {
      throw new BadRequestError(spentCode, [{ field: "code", message: spentCode }], { code: "invalid_code" });
    }
    return authSuccess(200, "Login successful", await sessionFor(signedIn.account, signedIn.session, jwtSecret));
  },
});
