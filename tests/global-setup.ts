/**
 * One stack for the whole run: on a fresh embedded PGlite by default, or on a
 * fresh PostgreSQL database with TEST_DATABASE=postgres (or on a database
 * given in TEST_DATABASE_URL, e.g. one prepared by `npm run db:push`).
 */
import type { TestProject } from "vitest/node";
import { createScratchDatabase, sharedStackLimits, startStack } from "./support/stack.ts";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    logFile: string;
    databaseUrl: string | undefined;
  }
}

export default async function setup(project: TestProject) {
  const scratch = process.env.TEST_DATABASE === "postgres" && !process.env.TEST_DATABASE_URL
    ? await createScratchDatabase("notes_test")
    : undefined;
  const databaseUrl = process.env.TEST_DATABASE_URL ?? scratch?.url;
  const stack = await startStack({ databaseUrl, env: sharedStackLimits });
  project.provide("baseUrl", stack.baseUrl);
  project.provide("logFile", stack.logFile);
  project.provide("databaseUrl", databaseUrl);
  return async () => {
    await stack.stop();
    await scratch?.drop();
  };
}
