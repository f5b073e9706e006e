/**
 * Second-factor secrets as the database keeps them: sealed with AES-256-GCM
 * under a key derived from `MFA_SECRET_KEY`, so a copy of the database (or of
 * an access token, which carries the sealed secret so checking a code needs no
 * read) yields no secret, and neither does `JWT_SECRET` with a user's
 * password. Each sealed secret names its key (`keyId`): `m1` is derived from
 * `MFA_SECRET_KEY`; `v1`, of factors enrolled before it existed, from
 * `JWT_SECRET`, which is why a `v1` secret never goes into a token.
 *
 * @example
 * ```ts
 * const { sealed, keyId } = await sealSecret(keys, secret);
 * const again = await unsealSecret(keys, { sealed, keyId });
 * ```
 */
import { base64url } from "jose";
import type { SealedSecret } from "../queries/sessions.ts";

/** The key new secrets are sealed with. */
export const currentKeyId = "m1";
/** The key of factors enrolled before `MFA_SECRET_KEY`: derived from `JWT_SECRET`. */
const legacyKeyId = "v1";

/** The server secrets sealing keys are derived from. */
export interface SealingSecrets {
  mfaSecretKey: Uint8Array;
  jwtSecret: Uint8Array;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const ivBytes = 12;

/** The AES-GCM key of `keyId` under its server secret, derived once per isolate. */
const keys = new WeakMap<Uint8Array, Map<string, Promise<CryptoKey>>>();

function sealingKey(
  secrets: SealingSecrets,
  keyId: string,
): Promise<CryptoKey> {
  const server = keyId === legacyKeyId ? secrets.jwtSecret : secrets.mfaSecretKey;
  let derived = keys.get(server);
  if (!derived) keys.set(server, derived = new Map());
  let key = derived.get(keyId);
  if (!key) {
    key = derive(server, keyId);
    derived.set(keyId, key);
  }
  return key;
}

async function derive(server: Uint8Array, keyId: string): Promise<CryptoKey> {
  // HKDF: a key of its own purpose and id, never usable as another's or as the JWT signing key.
  const secret = await crypto.subtle.importKey(
    "raw",
    new Uint8Array(server),
    "HKDF",
    false,
    ["deriveKey"],
  );
  return crypto.subtle.deriveKey(
    {
      name: "HKDF",
      hash: "SHA-256",
      salt: new Uint8Array(),
      info: encoder.encode(`notes-service second factor secret key ${keyId}`),
    },
    secret,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

/** Seals `secret` under the current key (or `keyId`, to move secrets between keys). */
export async function sealSecret(
  secrets: SealingSecrets,
  secret: string,
  keyId: string = currentKeyId,
): Promise<SealedSecret> {
  const iv = crypto.getRandomValues(new Uint8Array(ivBytes));
  const key = await sealingKey(secrets, keyId);
  const ciphertext = new Uint8Array(
    await crypto.subtle.encrypt(
      { name: "AES-GCM", iv },
      key,
      encoder.encode(secret),
    ),
  );
  const sealed = new Uint8Array(ivBytes + ciphertext.length);
  sealed.set(iv);
  sealed.set(ciphertext, ivBytes);
  return { sealed: base64url.encode(sealed), keyId };
}

/** Opens a sealed secret; undefined when it was not sealed by this server (tampered with, or another key). */
export async function unsealSecret(
  secrets: SealingSecrets,
  secret: SealedSecret,
): Promise<string | undefined> {
  try {
    // Copied: WebCrypto takes only buffers that cannot be shared.
    const bytes = new Uint8Array(base64url.decode(secret.sealed));
    const key = await sealingKey(secrets, secret.keyId);
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: bytes.subarray(0, ivBytes) },
      key,
      bytes.subarray(ivBytes),
    );
    return decoder.decode(plain);
  } catch {
    return undefined;
  }
}
