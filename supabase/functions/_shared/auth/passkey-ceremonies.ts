/**
 * The WebAuthn ceremonies, run by `@simplewebauthn/server`: the options a
 * browser is given, and the verification of what it answers. Every passkey
 * is discoverable and verifies its user (a fingerprint, a face, a PIN); no
 * attestation is asked. The counter is left to Postgres (`app.use_passkey`),
 * which moves it under the credential's row lock and records a regression.
 *
 * @example
 * ```ts
 * const options = await signInOptions(getConfig().passkeys, []);
 * ```
 */
import {
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import { decodeClientDataJSON, isoBase64URL } from "@simplewebauthn/server/helpers";
import { allowsPasskeyOrigin, type PasskeySettings } from "../config/mod.ts";
import type { User } from "../contract/accounts.ts";
import { type AuthenticationResponse, publicKeyBytes, type RegistrationResponse } from "../contract/passkeys.ts";
import type { NewPasskey, StoredPasskey, VerifiedUse } from "../queries/passkeys.ts";
import { authenticatorName } from "./authenticator-names.ts";

/** How long a ceremony's challenge lasts, as `app.passkey_challenge_lifetime()` keeps it. */
export const challengeSeconds = 300;

/** What a browser's answer claims before it is verified: the challenge it signed and the page it came from. */
export interface ClaimedCeremony {
  challenge: string;
  origin: string;
}

/** What a challenge this service issued looks like: base64url of a few dozen random bytes. */
const issuedChallenge = /^[A-Za-z0-9_-]{16,128}$/;

/**
 * The challenge and origin of a browser's answer, or undefined when its
 * client data is not one of this app's ceremonies: a challenge the service
 * could not have issued (which Postgres need not be asked about), or an answer
 * made inside another site's frame (`crossOrigin`: the app runs no ceremony
 * in a frame, and a page that framed it would be asking on its behalf).
 */
export function claimedCeremony(clientDataJSON: string): ClaimedCeremony | undefined {
  try {
    const { challenge, origin, crossOrigin } = decodeClientDataJSON(clientDataJSON);
    if (crossOrigin === true || typeof origin !== "string") return undefined;
    return typeof challenge === "string" && issuedChallenge.test(challenge) ? { challenge, origin } : undefined;
  } catch {
    return undefined;
  }
}

/** A UUID's 16 bytes: the user handle an account's passkeys carry. */
function uuidBytes(id: string): Uint8Array<ArrayBuffer> {
  const hex = id.replaceAll("-", "");
  return Uint8Array.from({ length: 16 }, (_, index) => parseInt(hex.slice(index * 2, index * 2 + 2), 16));
}

/** The creation options of a discoverable, user-verifying passkey for `user`, never one of `excludeIds` again. */
export function registrationOptions(
  settings: PasskeySettings,
  user: Pick<User, "id" | "email" | "name">,
  excludeIds: readonly string[],
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName: settings.rpName,
    rpID: settings.rpId,
    userID: uuidBytes(user.id),
    userName: user.email,
    userDisplayName: user.name,
    timeout: challengeSeconds * 1000,
    attestationType: "none",
    excludeCredentials: excludeIds.map((id) => ({ id })),
    authenticatorSelection: { residentKey: "required", userVerification: "required" },
  });
}

/** The request options of a sign-in: any discoverable passkey, or only `allowIds` (an account's, for its session). */
export function signInOptions(
  settings: PasskeySettings,
  allowIds: readonly string[],
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({
    rpID: settings.rpId,
    timeout: challengeSeconds * 1000,
    userVerification: "required",
    allowCredentials: allowIds.map((id) => ({ id })),
  });
}

/** Why a browser's answer was not verified (the detail is for the server log only, never the answer). */
export class CeremonyRefused extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = "CeremonyRefused";
  }

  /** Writes the detail to the server log: one line, no key, signature or token in it. */
  log(ceremony: "registration" | "assertion"): void {
    console.warn(JSON.stringify({ level: "warn", event: `passkey ${ceremony} refused`, detail: this.message }));
  }
}

function expectedOrigin(settings: PasskeySettings, claimed: ClaimedCeremony): string {
  if (!allowsPasskeyOrigin(settings, claimed.origin)) throw new CeremonyRefused(`origin ${claimed.origin} not allowed`);
  return claimed.origin;
}

/** Verifies a new credential for `claimed.challenge` (which Postgres then spends); throws `CeremonyRefused`. */
export async function verifiedRegistration(
  settings: PasskeySettings,
  response: RegistrationResponse,
  claimed: ClaimedCeremony,
  name: string | undefined,
): Promise<NewPasskey> {
  let verification;
  try {
    verification = await verifyRegistrationResponse({
      response: response as RegistrationResponseJSON,
      expectedChallenge: claimed.challenge,
      expectedOrigin: expectedOrigin(settings, claimed),
      expectedRPID: settings.rpId,
      requireUserVerification: true,
    });
  } catch (error) {
    throw new CeremonyRefused(error instanceof Error ? error.message : String(error));
  }
  if (!verification.verified) throw new CeremonyRefused("registration not verified");
  const info = verification.registrationInfo;
  // What is stored is the credential its authenticator data carries: the id the browser named must be that one (the
  // contract bounds it as Postgres does), and its key of a size Postgres keeps.
  if (info.credential.id !== response.id) throw new CeremonyRefused("the id named is not the credential's");
  const keyBytes = info.credential.publicKey.byteLength;
  if (keyBytes < publicKeyBytes.min || keyBytes > publicKeyBytes.max) {
    throw new CeremonyRefused(`a public key of ${keyBytes} bytes`);
  }
  return {
    credentialId: info.credential.id,
    publicKey: info.credential.publicKey,
    signCount: info.credential.counter,
    transports: (response.response.transports ?? []).slice(0, 8),
    deviceType: info.credentialDeviceType,
    backedUp: info.credentialBackedUp,
    aaguid: info.aaguid,
    name: name ?? authenticatorName(info.aaguid) ?? "Passkey",
  };
}

/**
 * Verifies an assertion against the stored credential; throws `CeremonyRefused`. The user handle, when the browser
 * sends one, must be the credential's account's.
 */
export async function verifiedAssertion(
  settings: PasskeySettings,
  response: AuthenticationResponse,
  claimed: ClaimedCeremony,
  stored: StoredPasskey,
): Promise<VerifiedUse> {
  const { userHandle } = response.response;
  if (userHandle !== undefined && userHandle !== isoBase64URL.fromBuffer(uuidBytes(stored.userId))) {
    throw new CeremonyRefused("user handle of another account");
  }
  let verification;
  try {
    verification = await verifyAuthenticationResponse({
      response: response as AuthenticationResponseJSON,
      expectedChallenge: claimed.challenge,
      expectedOrigin: expectedOrigin(settings, claimed),
      expectedRPID: settings.rpId,
      requireUserVerification: true,
      // The counter is Postgres's to check (app.use_passkey), under the row's lock, and to record when it goes back.
      credential: {
        id: response.id,
        publicKey: stored.publicKey as Uint8Array<ArrayBuffer>,
        counter: 0,
        transports: stored.transports as AuthenticatorTransport[],
      },
    });
  } catch (error) {
    throw new CeremonyRefused(error instanceof Error ? error.message : String(error));
  }
  if (!verification.verified) throw new CeremonyRefused("assertion not verified");
  const info = verification.authenticationInfo;
  return { passkeyId: stored.passkeyId, signCount: info.newCounter, backedUp: info.credentialBackedUp };
}

/** Options as the contract's `data.options` carries them: the JSON the browser's parsers take. */
export function optionsJson(
  options: PublicKeyCredentialCreationOptionsJSON | PublicKeyCredentialRequestOptionsJSON,
): { challenge: string; [member: string]: unknown } {
  return { ...options };
}
