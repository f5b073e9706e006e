/**
 * What admin tests need: the operator's `npm run admin` command run as an
 * operator would, and an admin signed in on a stack of the suite's own.
 */
import { execFile } from "node:child_process";
import { expect } from "vitest";
import { uniqueEmail } from "./api.ts";
import { expectSession } from "./auth.ts";
import type { ScratchStack } from "./scratch-stack.ts";

const repoRoot = new URL("../../", import.meta.url);
const deno = new URL("node_modules/.bin/deno", repoRoot).pathname;

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `scripts/admin.ts` with `args` and `env` in place of the test's own database settings. */
export function runAdminCommand(args: string[], env: Record<string, string>): Promise<CommandResult> {
  const { DATABASE_URL: _url, PGLITE_DATA_DIR: _dir, ...inherited } = process.env;
  return new Promise((resolve) => {
    execFile(
      deno,
      ["run", "--allow-all", "scripts/admin.ts", ...args],
      { cwd: repoRoot.pathname, env: { ...inherited, ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Grants `email` the role through the command, against `stack`'s database, and expects it to succeed. */
export async function grantAdmin(stack: ScratchStack, email: string): Promise<void> {
  const result = await runAdminCommand(["grant", email], { DATABASE_URL: stack.databaseUrl });
  expect(result.code, result.stderr).toBe(0);
}

export interface SignedUp {
  id: string;
  email: string;
  accessToken: string;
  refreshToken: string;
}

export const testPassword = "correct horse battery";

/** Registers a fresh account on `stack`. */
export async function signUp(stack: ScratchStack, label: string, headers: Record<string, string> = {}) {
  const email = uniqueEmail(label);
  const session = expectSession(
    await stack.call("/auth/register", { body: { name: `Test ${label}`, email, password: testPassword }, headers }),
    201,
  );
  return { id: session.payload.id, email, accessToken: session.accessToken, refreshToken: session.refreshToken };
}

/** Registers an account and makes it an admin with the operator's command. */
export async function signUpAdmin(stack: ScratchStack, label = "admin"): Promise<SignedUp> {
  const admin = await signUp(stack, label);
  await grantAdmin(stack, admin.email);
  return admin;
}
