/**
 * Passkeys attacked by a hostile client: each test is a request sequence a forged authenticator can send, and what
 * the contract promises it answers. A credential id, public key or challenge that Postgres cannot store is a clean
 * 4xx, not a 500; the id a registration names is the credential's; removing a lost passkey ends the sessions made
 * with it; an assertion made in another site's frame is refused. On a stack of its own that trusts `x-forwarded-for`.
 * Every test here failed on the code it was written against.
 */
import { createHash, generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { Encoder } from "cbor-x";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { passkeyAnswer, passkeyOptions } from "../supabase/functions/_shared/contract/mod.ts";
import { freshAddress, uniqueEmail } from "./support/api.ts";
import { expectSession } from "./support/auth.ts";
import { expectErrorCode } from "./support/error-codes.ts";
import { SoftAuthenticator, testOrigin } from "../dev/harness/passkey-authenticator.ts";
import { verifyAddress } from "./support/second-factor.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";

let stack: ScratchStack;

beforeAll(async () => {
  stack = await startScratchStack("passkeys-attacks", {
    env: { BCRYPT_COST: "4", TRUST_PROXY: "true", RESET_MAIL_MIN_INTERVAL_SECONDS: "0" },
  });
});

afterAll(async () => {
  await stack?.stop();
});

const password = "correct horse battery";

function post(path: string, body: unknown, token?: string) {
  return stack.call(path, { body, token, headers: { "x-forwarded-for": freshAddress() } });
}

function send(method: string, path: string, token: string, body?: unknown) {
  return stack.call(path, { method, body, token, headers: { "x-forwarded-for": freshAddress() } });
}

async function newAccount(label: string) {
  const email = uniqueEmail(label);
  const session = expectSession(await post("/auth/register", { name: label, email, password }), 201);
  await verifyAddress(stack, email, session.accessToken);
  return { email, accessToken: session.accessToken, userId: session.payload.id };
}

async function reauthenticate(token: string): Promise<void> {
  const proof = await post("/auth/reauthenticate", { password }, token);
  expect(proof.status, proof.text).toBe(200);
}

// deno-lint-ignore no-explicit-any
async function registrationOptions(token: string): Promise<any> {
  await reauthenticate(token);
  const response = await post("/auth/passkeys/register/options", {}, token);
  expect(response.status, response.text).toBe(200);
  return passkeyOptions.parse((response.body as { data: unknown }).data).options;
}

// As the harness writes CBOR: exact map sizes, no records or tags (an options object, as cbor-x's typings lack one).
const encoderOptions = { variableMapSize: true, useRecords: false, tagUint8Array: false, useTag259ForMaps: false };
const cbor = new Encoder(encoderOptions);
const sha256 = (data: string) => createHash("sha256").update(data).digest();

/**
 * A registration answer as a forged authenticator writes it: attestation `none`, user present and verified, with
 * the credential id and the COSE public key it chooses (the ES256 key of a real pair, plus `extra` map entries).
 */
function forgedRegistration(
  options: { challenge: string; rp: { id?: string } },
  forged: { credentialId: Buffer; extra?: [number, Buffer][] },
) {
  const rpId = options.rp.id ?? new URL(testOrigin).hostname;
  const { publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = publicKey.export({ format: "jwk" });
  const coseKey = new Map<number, number | Buffer>([
    [1, 2],
    [3, -7],
    [-1, 1],
    [-2, Buffer.from(jwk.x ?? "", "base64url")],
    [-3, Buffer.from(jwk.y ?? "", "base64url")],
    ...(forged.extra ?? []),
  ]);
  const idLength = Buffer.alloc(2);
  idLength.writeUInt16BE(forged.credentialId.length);
  const authData = Buffer.concat([
    sha256(rpId),
    Buffer.from([0x01 | 0x04 | 0x40]),
    Buffer.alloc(4),
    Buffer.alloc(16),
    idLength,
    forged.credentialId,
    Buffer.from(cbor.encode(coseKey)),
  ]);
  const clientData = JSON.stringify({
    type: "webauthn.create",
    challenge: options.challenge,
    origin: testOrigin,
    crossOrigin: false,
  });
  const id = forged.credentialId.toString("base64url");
  return {
    id,
    rawId: id,
    type: "public-key" as const,
    clientExtensionResults: {},
    response: {
      clientDataJSON: Buffer.from(clientData).toString("base64url"),
      attestationObject: Buffer.from(cbor.encode({ fmt: "none", attStmt: {}, authData })).toString("base64url"),
      transports: ["internal"],
    },
  };
}

describe("a forged registration", () => {
  it("with a credential id shorter than 16 characters is 400 passkey_invalid, not a 500", async () => {
    const account = await newAccount("short-credential-id");
    const options = await registrationOptions(account.accessToken);
    // 8 bytes: 11 base64url characters, which the id check of app.passkeys refuses.
    const response = forgedRegistration(options, { credentialId: randomBytes(8) });
    // The request's own `id` passes the contract's check; the one in the authenticator data is what is stored.
    response.id = response.rawId = randomBytes(32).toString("base64url");
    const answer = await post("/auth/passkeys/register", { response }, account.accessToken);
    expectErrorCode(answer, "passkey_invalid");
  });

  it("with a credential id over 1,400 characters is 400 passkey_invalid, not a 500", async () => {
    const account = await newAccount("long-credential-id");
    const options = await registrationOptions(account.accessToken);
    // 1,100 bytes: 1,467 base64url characters; the request's own `id` is checked against 1,400, the stored one not.
    const response = forgedRegistration(options, { credentialId: randomBytes(1100) });
    response.id = response.rawId = randomBytes(32).toString("base64url");
    const answer = await post("/auth/passkeys/register", { response }, account.accessToken);
    expectErrorCode(answer, "passkey_invalid");
  });

  it("with a COSE public key over 4,096 bytes is 400 passkey_invalid, not a 500", async () => {
    const account = await newAccount("huge-public-key");
    const options = await registrationOptions(account.accessToken);
    const response = forgedRegistration(options, { credentialId: randomBytes(32), extra: [[-70, randomBytes(5000)]] });
    const answer = await post("/auth/passkeys/register", { response }, account.accessToken);
    expectErrorCode(answer, "passkey_invalid");
  });
  it("whose `id` is not the credential id of its authenticator data is 400 passkey_invalid", async () => {
    const account = await newAccount("mismatched-credential-id");
    const options = await registrationOptions(account.accessToken);
    const response = forgedRegistration(options, { credentialId: randomBytes(32) });
    const named = randomBytes(32).toString("base64url");
    const answer = await post(
      "/auth/passkeys/register",
      { response: { ...response, id: named, rawId: named } },
      account.accessToken,
    );
    expectErrorCode(answer, "passkey_invalid");
    expect(await stack.sql`select credential_id from app.passkeys where user_id = ${account.userId}`).toEqual([]);
  });
});

describe("removing a lost passkey", () => {
  it("ends the sessions its finder signed in with, as removing the authenticator app ends the others", async () => {
    const account = await newAccount("lost-passkey");
    const lost = new SoftAuthenticator();
    const options = await registrationOptions(account.accessToken);
    const registered = await post("/auth/passkeys/register", { response: lost.create(options) }, account.accessToken);
    expect(registered.status, registered.text).toBe(201);
    const passkey = passkeyAnswer.parse((registered.body as { data: unknown }).data).passkey;
    // The finder of the lost device signs in with it, no email typed.
    const signInOptions = await post("/auth/passkeys/login/options", {});
    expect(signInOptions.status, signInOptions.text).toBe(200);
    // deno-lint-ignore no-explicit-any
    const request = passkeyOptions.parse((signInOptions.body as { data: unknown }).data).options as any;
    const finder = expectSession(await post("/auth/passkeys/login", { response: lost.get(request) }), 200);
    // The owner proves it is them and removes the passkey.
    await reauthenticate(account.accessToken);
    const removed = await send("DELETE", `/auth/passkeys?id=${passkey.id}`, account.accessToken);
    expect(removed.status, removed.text).toBe(200);
    expectErrorCode(await send("GET", "/auth/user", finder.accessToken), "token_revoked");
    const refreshed = await post("/auth/refresh", { refreshToken: finder.refreshToken });
    expect(refreshed.status, refreshed.text).toBe(401);
  });
});

describe("a challenge with a NUL character in its client data", () => {
  it("is 401 passkey_rejected at sign-in, not a 500", async () => {
    const account = await newAccount("nul-sign-in");
    const authenticator = new SoftAuthenticator();
    const options = await registrationOptions(account.accessToken);
    const registered = await post(
      "/auth/passkeys/register",
      { response: authenticator.create(options) },
      account.accessToken,
    );
    expect(registered.status, registered.text).toBe(201);
    // No options asked: the client data names a challenge Postgres cannot take as text.
    const response = authenticator.get({ challenge: "ab\u0000cd", rpId: "localhost" });
    expectErrorCode(await post("/auth/passkeys/login", { response }), "passkey_rejected");
  });

  it("is 400 passkey_invalid at registration, not a 500", async () => {
    const account = await newAccount("nul-register");
    const options = await registrationOptions(account.accessToken);
    const response = new SoftAuthenticator().create({ ...options, challenge: "ab\u0000cd" });
    expectErrorCode(await post("/auth/passkeys/register", { response }, account.accessToken), "passkey_invalid");
  });
});

describe("an assertion made inside another site's frame", () => {
  it("(client data crossOrigin true) is 401 passkey_rejected: the app runs no ceremony in a frame", async () => {
    const account = await newAccount("cross-origin");
    const authenticator = new SoftAuthenticator();
    const options = await registrationOptions(account.accessToken);
    const registered = await post(
      "/auth/passkeys/register",
      { response: authenticator.create(options) },
      account.accessToken,
    );
    expect(registered.status, registered.text).toBe(201);
    const asked = await post("/auth/passkeys/login/options", {});
    expect(asked.status, asked.text).toBe(200);
    const { challenge } = passkeyOptions.parse((asked.body as { data: unknown }).data).options;
    // What a browser signs for the app's page framed by another site (Safari sends no topOrigin).
    const [credential] = authenticator.credentials;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(1);
    const authData = Buffer.concat([sha256("localhost"), Buffer.from([0x01 | 0x04]), counter]);
    const clientData = Buffer.from(
      JSON.stringify({ type: "webauthn.get", challenge, origin: testOrigin, crossOrigin: true }),
    );
    const signature = sign("sha256", Buffer.concat([authData, createHash("sha256").update(clientData).digest()]), {
      key: credential.privateKey,
      dsaEncoding: "der",
    });
    const response = {
      id: credential.id,
      rawId: credential.id,
      type: "public-key" as const,
      clientExtensionResults: {},
      response: {
        clientDataJSON: clientData.toString("base64url"),
        authenticatorData: authData.toString("base64url"),
        signature: signature.toString("base64url"),
      },
    };
    expectErrorCode(await post("/auth/passkeys/login", { response }), "passkey_rejected");
  });
});
