/**
 * Passkeys (WebAuthn): registering one, signing in with one (also in the email field's autofill), the second step
 * and a proof of the owner with one, and the account's list: `client.passkeys`. The browser half of each ceremony
 * is `@simplewebauthn/browser`'s; the service verifies the answers.
 */
import { startAuthentication, startRegistration } from "@simplewebauthn/browser";
import type {
  PasskeyAnswer,
  PasskeyInfo,
  PasskeyList,
  PasskeyOptions,
  Reauthentication,
  Session,
} from "../../supabase/functions/_shared/contract/mod.ts";

export type { PasskeyCeremonies } from "./options.ts";
import type { PasskeyCeremonies, RequestOptions } from "./options.ts";
import type { Transport } from "./transport.ts";

/** The browser's own ceremonies, through `@simplewebauthn/browser`. */
export const browserCeremonies: PasskeyCeremonies = {
  // The options are the service's, already in the JSON form these take.
  create: (options) => startRegistration({ optionsJSON: options as never }),
  get: (options, autofill) =>
    startAuthentication({
      optionsJSON: options as never,
      useBrowserAutofill: autofill,
    }),
};

/** How a sign-in with a passkey is asked for. */
export interface PasskeySignInOptions {
  /**
   * Offer the passkeys in the autofill of an input with `autocomplete="username webauthn"` (conditional UI)
   * instead of a dialog: the promise settles when the user picks one there. Start it when the sign-in page opens.
   */
  autofill?: boolean;
}

/** The passkeys of the signed-in account, and signing in with one. */
export interface PasskeysApi {
  /**
   * Registers a passkey of this device for the signed-in account (the browser asks for a fingerprint, a face or a
   * PIN) and answers it. Needs a proof of the owner within the last 5 minutes (`client.auth.reauthenticate` with
   * the password, a code, or {@link PasskeysApi.reauthenticate}), else it throws 403 `reauthentication_required`.
   */
  register(
    options?: { name?: string },
    request?: RequestOptions,
  ): Promise<PasskeyInfo>;
  /**
   * Signs in with a passkey, no email typed, and keeps the session (at `aal2`: no second step). When the client
   * holds a session whose `mfaRequired` is true, this makes that second step instead, with one of its account's
   * passkeys. Throws 401 `passkey_rejected` when the service refuses the answer.
   */
  signIn(
    options?: PasskeySignInOptions,
    request?: RequestOptions,
  ): Promise<Session>;
  /** Proves the owner with one of the account's passkeys, as `POST /auth/reauthenticate` with a password does. */
  reauthenticate(request?: RequestOptions): Promise<Reauthentication>;
  /** The account's passkeys, oldest first. */
  list(request?: RequestOptions): Promise<PasskeyInfo[]>;
  /** Renames one of them. */
  rename(
    id: string,
    name: string,
    request?: RequestOptions,
  ): Promise<PasskeyInfo>;
  /** Removes one (needs a proof, as registering); throws 409 `last_sign_in_method` for the last way in. */
  remove(id: string, request?: RequestOptions): Promise<void>;
}

/** The passkey calls, through the client's transport, with `ceremonies` as the browser's half. */
export function passkeysApi(
  transport: Transport,
  ceremonies: PasskeyCeremonies = browserCeremonies,
): PasskeysApi {
  const options = async (
    name: "passkeysRegisterOptions" | "passkeysLoginOptions",
    request: RequestOptions,
  ) =>
    (await transport.call(name, {
      body: {},
      deadline: transport.deadline(request),
    }) as PasskeyOptions).options;
  return {
    register: async ({ name } = {}, request = {}) => {
      const response = await ceremonies.create(
        await options("passkeysRegisterOptions", request),
      );
      const body = name === undefined ? { response } : { response, name };
      return (await transport.call("passkeysRegister", {
        body,
        deadline: transport.deadline(request),
      }) as PasskeyAnswer)
        .passkey;
    },
    signIn: async ({ autofill = false } = {}, request = {}) => {
      const response = await ceremonies.get(
        await options("passkeysLoginOptions", request),
        autofill,
      );
      return transport.keep(
        await transport.call("passkeysLogin", {
          body: { response },
          deadline: transport.deadline(request),
        }) as Session,
      );
    },
    reauthenticate: async (request = {}) => {
      const passkey = await ceremonies.get(
        await options("passkeysLoginOptions", request),
        false,
      );
      return await transport.call("reauthenticate", {
        body: { passkey },
        deadline: transport.deadline(request),
      }) as Reauthentication;
    },
    list: async (request = {}) =>
      (await transport.call("passkeysList", {
        deadline: transport.deadline(request),
      }) as PasskeyList).passkeys,
    rename: async (id, name, request = {}) =>
      (await transport.call("passkeysRename", {
        query: { id },
        body: { name },
        deadline: transport.deadline(request),
      }) as PasskeyAnswer).passkey,
    remove: async (id, request = {}) => {
      await transport.call("passkeysRemove", {
        query: { id },
        deadline: transport.deadline(request),
      });
    },
  };
}
