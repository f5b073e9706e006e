/**
 * A software authenticator for the HTTP tests and the bench: it answers a ceremony's options as a browser's
 * `credential.toJSON()` would, with an ES256 key of Node's crypto, `attestationObject` in CBOR (cbor-x) and
 * attestation `none`. It can leave user verification out, keep a device-bound counter (and be told to send an old
 * one, as a cloned key would), or behave as a synced passkey (counter 0, backup flags set).
 */
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto";
import { Encoder } from "cbor-x";

/** The page a ceremony runs on: an origin the local stack's default settings allow. */
export const testOrigin = "http://localhost:5173";

// CBOR as authenticators write it: each map's exact size, no cbor-x records, typed-array tags or tag 259 around a
// map with integer keys (an option cbor-x reads but its typings leave out, hence no object literal here).
const encoderOptions = { variableMapSize: true, useRecords: false, tagUint8Array: false, useTag259ForMaps: false };
const cbor = new Encoder(encoderOptions);
const encode = (value: unknown) => cbor.encode(value);

const b64url = (bytes: Uint8Array | Buffer) => Buffer.from(bytes).toString("base64url");
const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest();

/** One credential the authenticator holds. */
export interface SoftCredential {
  id: string;
  rpId: string;
  userHandle: string;
  privateKey: KeyObject;
  counter: number;
  synced: boolean;
}

interface CreationOptions {
  challenge: string;
  rp: { id?: string };
  user: { id: string };
  excludeCredentials?: { id: string }[];
}

interface RequestOptions {
  challenge: string;
  rpId?: string;
  allowCredentials?: { id: string }[];
}

export interface AuthenticatorSettings {
  /** Whether it verifies its user (a fingerprint, a face, a PIN): the UV flag. */
  userVerification?: boolean;
  /** A synced passkey: the counter stays 0 and the backup flags are set. */
  synced?: boolean;
}

function clientData(type: "webauthn.create" | "webauthn.get", challenge: string, origin: string): Buffer {
  return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
}

function flagsOf(settings: { userVerification: boolean; synced: boolean }, attested: boolean): number {
  // UP, UV, BE (may be backed up), BS (is backed up), AT (attested credential data follows).
  return 0x01 | (settings.userVerification ? 0x04 : 0) | (settings.synced ? 0x08 | 0x10 : 0) | (attested ? 0x40 : 0);
}

function counterBytes(counter: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(counter);
  return bytes;
}

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];
  userVerification: boolean;
  readonly synced: boolean;

  constructor(settings: AuthenticatorSettings = {}) {
    this.userVerification = settings.userVerification ?? true;
    this.synced = settings.synced ?? false;
  }

  /** Answers creation options with a new credential, as `navigator.credentials.create()` then `toJSON()`. */
  create(options: CreationOptions, origin = testOrigin) {
    const rpId = options.rp.id ?? new URL(origin).hostname;
    const id = b64url(randomBytes(32));
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const jwk = publicKey.export({ format: "jwk" });
    const coseKey = new Map<number, number | Buffer>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, Buffer.from(jwk.x ?? "", "base64url")],
      [-3, Buffer.from(jwk.y ?? "", "base64url")],
    ]);
    const credentialId = Buffer.from(id, "base64url");
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(credentialId.length);
    const authData = Buffer.concat([
      sha256(rpId),
      Buffer.from([flagsOf(this, true)]),
      counterBytes(0),
      Buffer.alloc(16), // AAGUID: none named
      idLength,
      credentialId,
      Buffer.from(encode(coseKey)),
    ]);
    const credential: SoftCredential = {
      id,
      rpId,
      userHandle: options.user.id,
      privateKey,
      counter: 0,
      synced: this.synced,
    };
    this.credentials.push(credential);
    const attestationObject = encode({ fmt: "none", attStmt: {}, authData });
    return {
      id,
      rawId: id,
      type: "public-key" as const,
      authenticatorAttachment: "platform" as const,
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(clientData("webauthn.create", options.challenge, origin)),
        attestationObject: b64url(attestationObject),
        transports: ["internal"],
      },
    };
  }

  /**
   * Answers request options with an assertion of `credential` (else the first one allowed, or the first held), as
   * `navigator.credentials.get()` then `toJSON()`. `counter` sends that count instead of the next one.
   */
  get(
    options: RequestOptions,
    choice: { credential?: SoftCredential; counter?: number; origin?: string } = {},
  ) {
    const origin = choice.origin ?? testOrigin;
    const allowed = options.allowCredentials?.map((entry) => entry.id) ?? [];
    const credential = choice.credential ??
      this.credentials.find((held) => allowed.length === 0 || allowed.includes(held.id));
    if (!credential) throw new Error("the authenticator holds no credential these options allow");
    if (!credential.synced) credential.counter += 1;
    const counter = choice.counter ?? (credential.synced ? 0 : credential.counter);
    const authData = Buffer.concat([
      sha256(options.rpId ?? credential.rpId),
      Buffer.from([flagsOf({ userVerification: this.userVerification, synced: credential.synced }, false)]),
      counterBytes(counter),
    ]);
    const data = clientData("webauthn.get", options.challenge, origin);
    const signature = sign("sha256", Buffer.concat([authData, sha256(data)]), {
      key: credential.privateKey,
      dsaEncoding: "der",
    });
    return {
      id: credential.id,
      rawId: credential.id,
      type: "public-key" as const,
      authenticatorAttachment: "platform" as const,
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(data),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: credential.userHandle,
      },
    };
  }
}
