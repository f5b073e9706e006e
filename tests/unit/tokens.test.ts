import { type JWTPayload, SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { bearer, type TokenErrorCode } from "../../supabase/functions/_shared/contract/mod.ts";
import { InvalidRefreshTokenError, InvalidTokenError } from "../../supabase/functions/_shared/http/errors.ts";
import {
  jwtFromAuthorization,
  malformedAuthorization,
  verifyAccessToken,
} from "../../supabase/functions/_shared/auth/access-tokens.ts";
import { issueRefreshToken, readRefreshToken } from "../../supabase/functions/_shared/auth/refresh-tokens.ts";
import { issueDeviceToken, trustedDevice } from "../../supabase/functions/_shared/auth/device-tokens.ts";

const secret = new TextEncoder().encode("unit-test-secret-of-at-least-32-bytes!!");
const userId = "7b3c1b8e-58f6-4d6e-9d64-1f7e3f0f8a11";
const sessionId = "0d8f6c1e-2b7a-4e59-9c3d-5a1f7e2b8c40";
const now = () => Math.floor(Date.now() / 1000);

/** The claims the service issues (Supabase's conventions), valid for two hours from now. */
function serviceClaims(): JWTPayload {
  const iat = now();
  return {
    sub: userId,
    role: "authenticated",
    aud: "authenticated",
    email: "ada@example.com",
    app_role: "STANDARD_USER",
    session_id: sessionId,
    iat,
    exp: iat + 7_200,
  };
}

function sign(claims: JWTPayload, options: { alg?: string; key?: Uint8Array } = {}): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: options.alg ?? "HS256", typ: "JWT" })
    .sign(options.key ?? secret);
}

function without(claims: JWTPayload, name: string): JWTPayload {
  const copy = { ...claims };
  delete copy[name];
  return copy;
}

const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");

async function rejection(jwt: string): Promise<unknown> {
  return await verifyAccessToken(jwt, secret).then(() => undefined, (error: unknown) => error);
}

async function expectRejected(jwt: string, code: TokenErrorCode = "token_invalid") {
  const error = await rejection(jwt);
  // One answer for every failure but a genuine token's expiry, so a forger learns nothing about which check failed.
  expect(error).toEqual(new InvalidTokenError(code));
  expect(error).toMatchObject({ status: 401, code });
}

describe("verifyAccessToken", () => {
  it("returns the claims of a token the service would issue", async () => {
    const claims = serviceClaims();
    expect(await verifyAccessToken(await sign(claims), secret)).toMatchObject({
      sub: userId,
      role: "authenticated",
      aud: "authenticated",
      email: "ada@example.com",
      app_role: "STANDARD_USER",
      session_id: sessionId,
      iat: claims.iat,
      exp: claims.exp,
    });
  });

  it("rejects a token whose session_id is not a session id", async () => {
    for (const session_id of ["", "not-a-uuid", 42, null, [sessionId]]) {
      await expectRejected(await sign({ ...serviceClaims(), session_id }));
    }
  });

  it("rejects an expired token", async () => {
    const iat = now() - 7_300;
    await expectRejected(await sign({ ...serviceClaims(), iat, exp: iat + 7_200 }), "token_expired");
  });

  it("rejects a token signed with another secret", async () => {
    await expectRejected(await sign(serviceClaims(), { key: new TextEncoder().encode("x".repeat(40)) }));
  });

  it("rejects a token whose payload was changed after signing", async () => {
    const [header, , signature] = (await sign(serviceClaims())).split(".");
    const payload = base64url({ ...serviceClaims(), sub: "00000000-0000-4000-8000-000000000000" });
    await expectRejected(`${header}.${payload}.${signature}`);
  });

  it("rejects alg none, with or without a signature part", async () => {
    const unsigned = `${base64url({ alg: "none", typ: "JWT" })}.${base64url(serviceClaims())}`;
    await expectRejected(`${unsigned}.`);
    const [, , signature] = (await sign(serviceClaims())).split(".");
    await expectRejected(`${unsigned}.${signature}`);
  });

  it("rejects another HMAC algorithm even with the right secret", async () => {
    await expectRejected(await sign(serviceClaims(), { alg: "HS512" }));
  });

  it("rejects a wrong or missing audience", async () => {
    await expectRejected(await sign({ ...serviceClaims(), aud: "anon" }));
    await expectRejected(await sign(without(serviceClaims(), "aud")));
  });

  it.each(["sub", "exp", "iat", "role", "session_id"])("rejects a token without %s", async (claim) => {
    await expectRejected(await sign(without(serviceClaims(), claim)));
  });

  it("rejects the other Supabase roles", async () => {
    for (const role of ["anon", "service_role", "postgres"]) {
      await expectRejected(await sign({ ...serviceClaims(), role }));
    }
  });

  it("rejects a subject that is not a user id", async () => {
    await expectRejected(await sign({ ...serviceClaims(), sub: "not-a-uuid" }));
    await expectRejected(await sign({ ...serviceClaims(), sub: `${userId}' or '1'='1` }));
  });

  it("rejects strings that are not JWTs", async () => {
    for (const jwt of ["", "abc", "a.b.c", "Bearer x.y.z"]) await expectRejected(jwt);
  });
});

describe("verifyAccessToken remembering verified tokens", () => {
  it("still refuses a token it verified once, after the token expires", async () => {
    // Two seconds, not one: `iat` is rounded down, so a one-second token may
    // be expired already when a loaded machine first verifies it.
    const iat = now();
    const exp = iat + 2;
    const jwt = await sign({ ...serviceClaims(), iat, exp });
    await expect(verifyAccessToken(jwt, secret)).resolves.toMatchObject({ sub: userId });
    await new Promise((resolve) => setTimeout(resolve, (exp - Date.now() / 1000) * 1000 + 100));
    await expectRejected(jwt, "token_expired");
  });

  it("does not accept under another secret a token it verified under this one", async () => {
    const jwt = await sign(serviceClaims());
    await expect(verifyAccessToken(jwt, secret)).resolves.toMatchObject({ sub: userId });
    const otherSecret = new TextEncoder().encode("another-unit-test-secret-of-32-bytes!!!");
    await expect(verifyAccessToken(jwt, otherSecret)).rejects.toEqual(new InvalidTokenError("token_invalid"));
  });
});

describe("jwtFromAuthorization", () => {
  const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl";

  it("takes the JWT out of Bearer <jwt>, the scheme in any case", () => {
    expect(jwtFromAuthorization(`Bearer ${jwt}`)).toBe(jwt);
    expect(jwtFromAuthorization(`bearer ${jwt}`)).toBe(jwt);
  });

  it("tolerates the login response's accessToken sent behind another Bearer", () => {
    expect(jwtFromAuthorization(`Bearer ${bearer(jwt)}`)).toBe(jwt);
  });

  it("answers 401 without a header", () => {
    expect(() => jwtFromAuthorization(null)).toThrow(new InvalidTokenError("token_missing"));
    expect(() => jwtFromAuthorization("")).toThrow(new InvalidTokenError("token_missing"));
  });

  it("answers 401 to anything else", () => {
    for (const header of [jwt, `Basic ${jwt}`, "Bearer ", `Bearer Bearer Bearer ${jwt}`, `Bearer ${jwt} extra`]) {
      expect(() => jwtFromAuthorization(header), header).toThrow(
        new InvalidTokenError("token_invalid", malformedAuthorization),
      );
    }
  });
});

describe("bearer", () => {
  it("is the accessToken form of interface.md, and leaves a prefixed token as it is", () => {
    expect(bearer("a.b.c")).toBe("Bearer a.b.c");
    expect(bearer("Bearer a.b.c")).toBe("Bearer a.b.c");
  });
});

/** Every other spelling of a token's MAC that decodes to the same bytes: its last character with other padding bits. */
function respellings(token: string): string[] {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const value = alphabet.indexOf(token.at(-1)!);
  return [1, 2, 3].map((padding) => `${token.slice(0, -1)}${alphabet[(value & ~3) | padding]}`);
}

describe("refresh and device tokens", () => {
  it("verify only the spelling the service issued, not one that differs in the MAC's padding bits", async () => {
    const refresh = await issueRefreshToken({ sessionId, generation: 3 }, secret);
    await expect(readRefreshToken(refresh, secret)).resolves.toEqual({ sessionId, generation: 3 });
    for (const respelt of respellings(refresh)) {
      await expect(readRefreshToken(respelt, secret), respelt).rejects.toEqual(
        new InvalidRefreshTokenError("refresh_token_invalid"),
      );
    }
    const device = await issueDeviceToken(userId, 2, secret);
    await expect(trustedDevice(device, secret)).resolves.toMatchObject({ userId, generation: 2 });
    for (const respelt of respellings(device)) {
      await expect(trustedDevice(respelt, secret), respelt).resolves.toBeUndefined();
    }
  });
});
