/**
 * The contract of passkeys (WebAuthn): the options of a ceremony, as
 * `PublicKeyCredential.parseCreationOptionsFromJSON` and
 * `parseRequestOptionsFromJSON` take them; the browser's `credential.toJSON()`
 * sent back; and an account's passkeys.
 */
import { z } from "zod";
import { isoTimestamp, text } from "./common.ts";

/** At most this many passkeys per account. */
export const passkeysMax = 10;
/** The size of a public key Postgres stores (`app.passkeys.public_key`): room for post-quantum keys. */
export const publicKeyBytes = { min: 16, max: 4096 };

const base64url = (field: string, max: number) =>
  text(field).max(max, `${field} must be at most ${max} characters`).regex(
    /^[A-Za-z0-9_-]*$/,
    `${field} must be base64url`,
  );

/** What every credential's `toJSON()` carries besides its response. */
const credentialFields = {
  id: base64url("response.id", 1400).min(16, "response.id must be a credential id"),
  rawId: base64url("response.rawId", 1400),
  type: z.literal("public-key", "response.type must be public-key"),
  authenticatorAttachment: z.enum(["platform", "cross-platform"]).optional(),
  clientExtensionResults: z.looseObject({}),
};

/** A new credential as the browser answers `navigator.credentials.create()` (`RegistrationResponseJSON`). */
export const registrationResponse = z.object({
  ...credentialFields,
  response: z.object({
    clientDataJSON: base64url("response.response.clientDataJSON", 4000),
    attestationObject: base64url("response.response.attestationObject", 20000),
    authenticatorData: base64url("response.response.authenticatorData", 8000).optional(),
    transports: z.array(z.string().max(32)).max(8).optional(),
    publicKeyAlgorithm: z.number().int().optional(),
    publicKey: base64url("response.response.publicKey", 8000).optional(),
  }),
});
export type RegistrationResponse = z.infer<typeof registrationResponse>;

/** An assertion as the browser answers `navigator.credentials.get()` (`AuthenticationResponseJSON`). */
export const authenticationResponse = z.object({
  ...credentialFields,
  response: z.object({
    clientDataJSON: base64url("response.response.clientDataJSON", 4000),
    authenticatorData: base64url("response.response.authenticatorData", 4000),
    // Room for a post-quantum signature: ML-DSA-44 (COSE -48), which browsers offer, signs with 2,420 bytes.
    signature: base64url("response.response.signature", 8000),
    userHandle: base64url("response.response.userHandle", 100).optional(),
  }),
});
export type AuthenticationResponse = z.infer<typeof authenticationResponse>;

const passkeyName = text("name").trim().min(1, "name must not be empty").max(
  100,
  "name must be at most 100 characters",
);

/** Body of `POST /auth/passkeys/register`: the browser's new credential, and a name for it (else the authenticator's). */
export const registerPasskeyBody = z.object({ response: registrationResponse, name: passkeyName.optional() });
export type RegisterPasskeyBody = z.infer<typeof registerPasskeyBody>;

/** Body of `POST /auth/passkeys/login`: the browser's assertion. */
export const passkeyLoginBody = z.object({ response: authenticationResponse });
export type PasskeyLoginBody = z.infer<typeof passkeyLoginBody>;

/** Body of the options endpoints: nothing (an empty object, or no body). */
export const passkeyOptionsBody = z.object({});

/**
 * `data` of `POST /auth/passkeys/register/options` and `/login/options`: `options` as the browser's JSON parsers
 * take them; the challenge inside is the ceremony's handle, and comes back inside the browser's answer.
 */
export const passkeyOptions = z.object({
  options: z.looseObject({ challenge: z.string() }).meta({
    description: "PublicKeyCredentialCreationOptionsJSON or PublicKeyCredentialRequestOptionsJSON (WebAuthn Level 3)",
  }),
  expiresAt: isoTimestamp,
});
export type PasskeyOptions = z.infer<typeof passkeyOptions>;

/** One passkey of the account, as `GET /auth/passkeys` lists it. */
export const passkeyInfo = z.object({
  id: z.string(),
  name: z.string(),
  createdAt: isoTimestamp,
  lastUsedAt: isoTimestamp.nullable(),
  /** Synced across the owner's devices (a multi-device credential, backed up). */
  synced: z.boolean(),
  /** The authenticator's name, from its AAGUID, where known. */
  authenticator: z.string().nullable(),
});
export type PasskeyInfo = z.infer<typeof passkeyInfo>;

/** `data` of `GET /auth/passkeys`. */
export const passkeyList = z.object({ passkeys: z.array(passkeyInfo) });
export type PasskeyList = z.infer<typeof passkeyList>;

/** `data` of `POST /auth/passkeys/register` and `PATCH /auth/passkeys`. */
export const passkeyAnswer = z.object({ passkey: passkeyInfo });
export type PasskeyAnswer = z.infer<typeof passkeyAnswer>;

/** Query of `PATCH` and `DELETE /auth/passkeys`. */
export const passkeyQuery = z.object({
  id: text("id").regex(
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
    "id must be a passkey's id",
  ),
});
export type PasskeyQuery = z.infer<typeof passkeyQuery>;

/** Body of `PATCH /auth/passkeys?id=`. */
export const renamePasskeyBody = z.object({ name: passkeyName });
export type RenamePasskeyBody = z.infer<typeof renamePasskeyBody>;

/** `data` of `DELETE /auth/passkeys`: the passkey that is gone. */
export const removedPasskey = z.object({ id: z.string() });
export type RemovedPasskey = z.infer<typeof removedPasskey>;
