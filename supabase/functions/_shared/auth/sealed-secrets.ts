/**
 * Second-factor secrets as the database keeps them: sealed with AES-256-GCM
 * under a key derived from the server secret, so a copy of the database (or of
 * an access token, which carries the sealed secret so checking a code needs no
 * read) yields no secret. Each sealed secret names its key (`keyId`): a new
 * key can take over for new factors while the old one still opens the rest.
 *
 * @example
 * ```ts
 * const { sealed, keyId } = await sealSecret(jwtSecret, secret);
 * const again = await unsealSecret(jwtSecret, { sealed, keyId });
 * ```
 */
import { base64url } from "jose";
import type { SealedSecret } from "../queries/second-factors.ts";

/** The key new secrets are sealed with. */
export const currentKeyId = "v1";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const ivBytes = 12;

/** The AES-GCM key of `keyId` under `jwtSecret`, derived once per isolate. */
const keys = new WeakMap<Uint8Array, Map<string, Promise<CryptoKey>>>();

function sealingKey(jwtSecret: Uint8Array, keyId: string): Promise<CryptoKey> {
  let derived = keys.get(jwtSecret);
  if (!derived) keys.set(jwtSecret, derived = new Map());
  let key = derived.get(keyId);
  if (!key) {
    key = derive(jwtSecret, keyId);
    derived.set(keyId, key);
  }
  return key;
}

async function derive(jwtSecret: Uint8Array, keyId: string): Promise<CryptoKey> {
  // HKDF: a key of its own purpose and id, never usable as another's or as the JWT signing key.
  const secret = await crypto.subtle.importKey("raw", new Uint8Array(jwtSecret), "HKDF", false, ["deriveKey"]);
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

/** Seals `secret` under the current key. */
export async function sealSecret(jwtSecret: Uint8Array, secret: string): Promise<SealedSecret> {
  const iv = crypto.getRandomValues(new Uint8Array(ivBytes));
  const key = await sealingKey(jwtSecret, currentKeyId);
  const ciphertext = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, encoder.encode(secret)));
  const sealed = new Uint8Array(ivBytes + ciphertext.length);
  sealed.set(iv);
  sealed.set(ciphertext, ivBytes);
  return { sealed: base64url.encode(sealed), keyId: currentKeyId };
}

/** Opens a sealed secret; undefined when it was not sealed by this server (tampered with, or another key). */
export async function unsealSecret(jwtSecret: Uint8Array, secret: SealedSecret): Promise<string | undefined> {
  try {
    // Copied: WebCrypto takes only buffers that cannot be shared.
    const bytes = new Uint8Array(base64url.decode(secret.sealed));
    const key = await sealingKey(jwtSecret, secret.keyId);
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
