/**
 * Checks on auth answers through the contract's own schemas, so every test
 * that reads a response also proves its shape.
 */
import { decodeJwt, decodeProtectedHeader } from "jose";
import { expect } from "vitest";
import {
  type AuthErrorEnvelope,
  authErrorEnvelope,
  authSuccessEnvelope,
  type Session,
  session,
} from "../../supabase/functions/_shared/contract/mod.ts";
import type { ApiResponse } from "./api.ts";

/** The auth success envelope around a session, as login, register and create-password answer. */
export const sessionEnvelope = authSuccessEnvelope(session);

/** Asserts `status` and the session envelope, and that `expiresAt` is the token's own expiry; returns the session. */
export function expectSession(response: ApiResponse, status: number): Session {
  expect(response.status, response.text).toBe(status);
  const envelope = sessionEnvelope.parse(response.body);
  expect(envelope.statusCode).toBe(status);
  const { claims } = decodeAccessToken(envelope.data.accessToken);
  expect(Date.parse(envelope.data.expiresAt)).toBe((claims.exp ?? Number.NaN) * 1000);
  return envelope.data;
}

/** Asserts `status` and the auth error envelope, and returns it. */
export function expectAuthError(response: ApiResponse, status: number): AuthErrorEnvelope {
  expect(response.status, response.text).toBe(status);
  const envelope = authErrorEnvelope.strict().parse(response.body);
  expect(envelope.statusCode).toBe(status);
  return envelope;
}

/** The JWT inside an `accessToken` of the form `"Bearer <jwt>"`. */
export function jwtOf(accessToken: string): string {
  const match = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/.exec(accessToken);
  if (!match) throw new Error(`not a "Bearer <jwt>" string: ${accessToken}`);
  return match[1];
}

/** Decodes (without verifying) the claims and header of an `accessToken`. */
export function decodeAccessToken(accessToken: string) {
  const jwt = jwtOf(accessToken);
  return { header: decodeProtectedHeader(jwt), claims: decodeJwt(jwt) };
}

/** The four auth actions, each reachable through the router and as its own function. */
export const authActions = ["login", "register", "create-password", "request-password-reset"] as const;
export type AuthAction = (typeof authActions)[number];

/** Both paths of an action: the interface's `/auth/<action>` and the function `/auth-<action>`. */
export function pathsOf(action: AuthAction): string[] {
  return [`/auth/${action}`, `/auth-${action}`];
}

/** A body each action accepts, for tests about everything but the body. */
export function validBodyFor(action: AuthAction, email: string): Record<string, string> {
  switch (action) {
    case "login":
      return { email, password: "correct horse battery" };
    case "register":
      return { name: "Valid Body", email, password: "correct horse battery" };
    case "create-password":
      return { email, password: "correct horse battery", code: "000000" };
    case "request-password-reset":
      return { email };
  }
}
