/**
 * HMAC keys derived from `JWT_SECRET`, one per purpose, so a MAC made for one
 * purpose (a refresh token, a stored verification code) can never pass for
 * another's or for a JWT signature made with the same secret.
 *
 * @example
 * ```ts
 * const key = await derivedKey(jwtSecret, "refresh token");
 * const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode("..."));
 * ```
 */

/** What each derived key is for; the label is part of the derivation. */
export type KeyPurpose =
  | "refresh token"
  | "email verification code"
  | "password reset code"
  | "email sign-in code"
  | "device token"
  | "recovery code"
  | "provider sign-in state"
  | "provider sign-in code"
  | "provider sign-in browser";

const encoder = new TextEncoder();

/** Keys derived in this isolate, per secret and purpose. */
const derived = new WeakMap<Uint8Array, Map<KeyPurpose, Promise<CryptoKey>>>();

/** The HMAC-SHA256 key of `purpose` under `jwtSecret`, derived once per isolate. */
export function derivedKey(jwtSecret: Uint8Array, purpose: KeyPurpose): Promise<CryptoKey> {
  let keys = derived.get(jwtSecret);
  if (!keys) derived.set(jwtSecret, keys = new Map());
  let key = keys.get(purpose);
  if (!key) {
    key = derive(jwtSecret, purpose);
    keys.set(purpose, key);
  }
  return key;
}

async function derive(jwtSecret: Uint8Array, purpose: KeyPurpose): Promise<CryptoKey> {
  // Copied: WebCrypto takes only buffers that cannot be shared.
  const secret = await crypto.subtle.importKey("raw", new Uint8Array(jwtSecret), hmac, false, ["sign"]);
  const bytes = await crypto.subtle.sign("HMAC", secret, encoder.encode(`notes-service ${purpose} key v1`));
  return crypto.subtle.importKey("raw", bytes, hmac, false, ["sign", "verify"]);
}

const hmac = { name: "HMAC", hash: "SHA-256" } as const;

/**
 * A 256-bit MAC in base64url as `base64url.encode` writes it: 43 characters, the last carrying 4 bits and 2 zero bits.
 * A decoder ignores those 2 bits, so without the narrow last character one MAC had four spellings, and a token
 * altered in its last character could still verify.
 */
export const macSource = "[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]";

/** Hex HMAC-SHA256 of `input` under the key of `purpose`: how codes are stored and compared. */
export async function hexMac(jwtSecret: Uint8Array, purpose: KeyPurpose, input: string): Promise<string> {
  const key = await derivedKey(jwtSecret, purpose);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(input)));
  return Array.from(mac, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
