/**
 * Anonymous accounts' calls for the round-trip measurement: starting one, signing one up (with a password, or with a
 * code mailed to the address), and merging one into an existing account. Each sample gets an anonymous account of its own, made while the call is built, before the timer
 * starts; the upgrade's and the merge's one statement each does all of their work.
 *
 * @example
 * ```ts
 * const calls = await anonymousCalls(stack.baseUrl, testAnonKey);
 * ```
 */
import { type Call, send } from "./requests.ts";

export function anonymousCalls(baseUrl: string, apiKey: string): Record<string, () => Promise<Call>> {
  const apikey = { apikey: apiKey };
  const password = "round trips password";
  let counter = 0;
  const anonymousToken = async () =>
    String(
      (await send(baseUrl, { path: "/auth/anonymous", method: "POST", headers: apikey, status: 201 })).body.data
        ?.accessToken,
    );
  /** A real account to merge into, signed in when the call is built (a token kept for minutes may have ended). */
  const signedInOwner = async () => {
    const owner = await send(baseUrl, {
      path: "/auth/register",
      method: "POST",
      headers: apikey,
      body: { name: "Merges", email: `rt-merge-${Date.now()}-${counter++}@example.com`, password },
      status: 201,
    });
    return { ...apikey, authorization: String(owner.body.data?.accessToken) };
  };
  return {
    "auth/anonymous": () => Promise.resolve({ path: "/auth/anonymous", method: "POST", headers: apikey, status: 201 }),
    "auth/anonymous/upgrade": async () => ({
      path: "/auth/anonymous/upgrade",
      method: "POST",
      headers: { ...apikey, authorization: await anonymousToken() },
      body: { name: "Upgraded", email: `rt-upgrade-${Date.now()}-${counter++}@example.com`, password },
      status: 200,
    }),
    // Each for an anonymous account and an address of its own: a code a minute per account and per address.
    "auth/anonymous/upgrade/code": async () => ({
      path: "/auth/anonymous/upgrade/code",
      method: "POST",
      headers: { ...apikey, authorization: await anonymousToken() },
      body: { email: `rt-code-${Date.now()}-${counter++}@example.com` },
      status: 200,
    }),
    // A wrong code runs the same single statement as a right one (app.upgrade_anonymous_with_code and the session's
    // start); each for an address of its own, as ten wrong codes an hour stop an address.
    "auth/anonymous/upgrade/verify": async () => ({
      path: "/auth/anonymous/upgrade/verify",
      method: "POST",
      headers: { ...apikey, authorization: await anonymousToken() },
      body: { name: "Coded", email: `rt-verify-${Date.now()}-${counter++}@example.com`, code: "00000000" },
      status: 400,
    }),
    "auth/anonymous/merge": async () => {
      const anonymous = await anonymousToken();
      await send(baseUrl, {
        path: "/notes-create",
        method: "POST",
        headers: { authorization: anonymous },
        body: { title: "to merge" },
        status: 201,
      });
      return {
        path: "/auth/anonymous/merge",
        method: "POST",
        headers: await signedInOwner(),
        body: { anonymousAccessToken: anonymous },
        status: 200,
      };
    },
  };
}
