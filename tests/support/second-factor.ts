/**
 * A second factor as its owner sets it up: an account whose address is verified with the mailed code (enrolling
 * needs it), an authenticator enrolled with the password, and activated with a code made from the secret as an
 * authenticator app makes it.
 */
import { expect } from "vitest";
import { activation, enrollment } from "../../supabase/functions/_shared/contract/mod.ts";
import { codeAt, totpPolicy } from "../../supabase/functions/_shared/auth/totp.ts";
import { freshAddress, readMailedCode, uniqueEmail } from "./api.ts";
import { expectSession } from "./auth.ts";
import type { ScratchStack } from "./scratch-stack.ts";

export const period = totpPolicy.periodSeconds * 1000;

/** Waits, if needed, until at least `marginMs` remain of the current time step, so a code made now is still now's. */
export async function awayFromStepEdge(marginMs = 3_000): Promise<void> {
  const left = period - (Date.now() % period);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

/** The code an authenticator with `secret` shows `steps` time steps from now. */
export function codeOf(secret: string, steps = 0): string {
  return codeAt(secret, Date.now() + steps * period);
}

/** Verifies the address of the signed-in account with the code mailed at registration. */
export async function verifyAddress(stack: ScratchStack, email: string, accessToken: string): Promise<void> {
  const code = await readMailedCode(email, { kind: "verification", logFile: stack.logFile });
  const verified = await stack.call("/auth/verify-email", {
    body: { email, code },
    token: accessToken,
    headers: { "x-forwarded-for": freshAddress() },
  });
  expect(verified.status, verified.text).toBe(200);
}

export interface Enrolled {
  email: string;
  userId: string;
  secret: string;
  factorId: string;
  /** An aal2 session's access token, from activation. */
  accessToken: string;
  recoveryCodes: string[];
}

/** Registers an account with `password`, verifies its address, enrolls and activates a factor. */
export async function enrolledAccount(stack: ScratchStack, label: string, password: string): Promise<Enrolled> {
  const post = (path: string, body: unknown, token?: string) =>
    stack.call(path, { body, token, headers: { "x-forwarded-for": freshAddress() } });
  const email = uniqueEmail(label);
  const registered = expectSession(await post("/auth/register", { name: label, email, password }), 201);
  await verifyAddress(stack, email, registered.accessToken);
  const enrolled = await post("/auth/mfa/enroll", { password }, registered.accessToken);
  expect(enrolled.status, enrolled.text).toBe(201);
  const { factorId, secret } = enrollment.parse((enrolled.body as { data: unknown }).data);
  await awayFromStepEdge();
  const activated = await post("/auth/mfa/activate", { factorId, code: codeOf(secret) }, registered.accessToken);
  expect(activated.status, activated.text).toBe(200);
  const data = activation.parse((activated.body as { data: unknown }).data);
  return {
    email,
    userId: data.payload.id,
    secret,
    factorId,
    accessToken: data.accessToken,
    recoveryCodes: data.recoveryCodes,
  };
}
