/**
 * The passkeys' calls for the round-trip measurement, answered by a software authenticator
 * (`dev/harness/passkey-authenticator.ts`): the options of each ceremony, a registration, a usernameless sign-in, the
 * second step and a proof with a passkey, and the list, a rename and a removal. Each call that spends a challenge
 * asks for its options while it is built, before the timer starts.
 *
 * @example
 * ```ts
 * const calls = await passkeyCalls(stack.baseUrl, testAnonKey);
 * ```
 */
import { SoftAuthenticator } from "../dev/harness/passkey-authenticator.ts";
import { type Call, send } from "./requests.ts";

/** The ceremonies that read before they write: the credential's public key before its signature can be checked. */
export const passkeyTwoTransactions = [
  "auth/passkeys/login",
  "auth/passkeys/login second step",
  "auth/reauthenticate with a passkey",
];

export async function passkeyCalls(baseUrl: string, apiKey: string): Promise<Record<string, () => Promise<Call>>> {
  const apikey = { apikey: apiKey };
  const password = "round trips password";
  let counter = 0;
  const login = async (email: string) =>
    String(
      (await send(baseUrl, {
        path: "/auth/login",
        method: "POST",
        headers: apikey,
        body: { email, password },
        status: 200,
      }))
        .body.data?.accessToken,
    );
  /** A new account signed in, with a proof given: registering needs one, and an account holds at most 10 passkeys. */
  const provenAccount = async () => {
    const email = `rt-passkey-${Date.now()}-${counter++}@example.com`;
    const registered = await send(baseUrl, {
      path: "/auth/register",
      method: "POST",
      headers: apikey,
      body: { name: "Passkeys", email, password },
      status: 201,
    });
    const signedIn = { ...apikey, authorization: String(registered.body.data?.accessToken) };
    await send(baseUrl, {
      path: "/auth/reauthenticate",
      method: "POST",
      headers: signedIn,
      body: { password },
      status: 200,
    });
    return { email, signedIn };
  };
  const optionsOf = async (path: string, headers: Record<string, string>) =>
    // deno-lint-ignore no-explicit-any
    (await send(baseUrl, { path, method: "POST", headers, body: {}, status: 200 })).body.data?.options as any;
  const authenticator = new SoftAuthenticator();
  const owner = await provenAccount();
  const registerOptions = await optionsOf("/auth/passkeys/register/options", owner.signedIn);
  const registered = await send(baseUrl, {
    path: "/auth/passkeys/register",
    method: "POST",
    headers: owner.signedIn,
    body: { response: authenticator.create(registerOptions), name: "Round trips" },
    status: 201,
  });
  const passkeyId = String((registered.body.data?.passkey as { id?: string } | undefined)?.id);
  const assertion = async (headers: Record<string, string>) =>
    authenticator.get(await optionsOf("/auth/passkeys/login/options", headers));
  return {
    "auth/passkeys/register/options": () =>
      Promise.resolve({
        path: "/auth/passkeys/register/options",
        method: "POST",
        headers: owner.signedIn,
        body: {},
        status: 200,
      }),
    // Verified in the function; one statement spends the challenge, checks the proof and the cap, and stores it.
    "auth/passkeys/register": async () => {
      const account = await provenAccount();
      const options = await optionsOf("/auth/passkeys/register/options", account.signedIn);
      return {
        path: "/auth/passkeys/register",
        method: "POST",
        headers: account.signedIn,
        body: { response: new SoftAuthenticator().create(options) },
        status: 201,
      };
    },
    "auth/passkeys/login/options": () =>
      Promise.resolve({ path: "/auth/passkeys/login/options", method: "POST", headers: apikey, body: {}, status: 200 }),
    "auth/passkeys/login": async () => ({
      path: "/auth/passkeys/login",
      method: "POST",
      headers: apikey,
      body: { response: await assertion(apikey) },
      status: 200,
    }),
    "auth/passkeys/login second step": async () => {
      const firstStep = { ...apikey, authorization: await login(owner.email) };
      return {
        path: "/auth/passkeys/login",
        method: "POST",
        headers: firstStep,
        body: { response: await assertion(firstStep) },
        status: 200,
      };
    },
    "auth/reauthenticate with a passkey": async () => ({
      path: "/auth/reauthenticate",
      method: "POST",
      headers: owner.signedIn,
      body: { passkey: await assertion(owner.signedIn) },
      status: 200,
    }),
    "auth/passkeys": () =>
      Promise.resolve({ path: "/auth/passkeys", method: "GET", headers: owner.signedIn, status: 200 }),
    "auth/passkeys PATCH": () =>
      Promise.resolve({
        path: `/auth/passkeys?id=${passkeyId}`,
        method: "PATCH",
        headers: owner.signedIn,
        body: { name: `Round trips ${counter++}` },
        status: 200,
      }),
    // With a proof given: one statement checks it and the last way in, and finds no such passkey.
    "auth/passkeys DELETE": () =>
      Promise.resolve({
        path: `/auth/passkeys?id=${crypto.randomUUID()}`,
        method: "DELETE",
        headers: owner.signedIn,
        status: 404,
      }),
  };
}
