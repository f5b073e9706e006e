/**
 * Anonymous accounts' calls for the round-trip measurement: starting one, signing one up, and merging one into an
 * existing account. Each sample gets an anonymous account of its own, made while the call is built, before the timer
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
