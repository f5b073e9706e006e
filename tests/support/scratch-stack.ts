/**
 * A stack of a suite's own, with its own settings, on a fresh PostgreSQL
 * database that the suite can also read and change with SQL: to shift a
 * limit's window into the past instead of waiting for it, to suspend or delete
 * an account as an operator would, or to compare the tables before and after a
 * request. The database is dropped when the stack stops.
 */
import postgres from "postgres";
import { type ApiRequest, type ApiResponse, call } from "./api.ts";
import { createScratchDatabase, type RunningStack, startStack } from "./stack.ts";

export interface ScratchStack {
  baseUrl: string;
  logFile: string;
  /** The database's URL, as the stack would reach it without any proxy. */
  databaseUrl: string;
  /** A direct connection to the stack's database, as its owner. */
  sql: postgres.Sql;
  /** `call` against this stack. */
  call(path: string, request?: ApiRequest): Promise<ApiResponse>;
  stop(): Promise<void>;
}

/**
 * Starts a stack with `env` on a new database named after `prefix`. With
 * `route`, the stack reaches the database through the URL it returns (a proxy).
 */
export async function startScratchStack(
  prefix: string,
  options: { env?: Record<string, string>; route?: (databaseUrl: string) => string } = {},
): Promise<ScratchStack> {
  const database = await createScratchDatabase(prefix);
  let stack: RunningStack;
  try {
    stack = await startStack({ env: options.env, databaseUrl: options.route?.(database.url) ?? database.url });
  } catch (error) {
    await database.drop();
    throw error;
  }
  const sql = postgres(database.url, { max: 2, prepare: false, onnotice: () => {} });
  return {
    baseUrl: stack.baseUrl,
    logFile: stack.logFile,
    databaseUrl: database.url,
    sql,
    call: (path, request = {}) => call(path, { ...request, baseUrl: stack.baseUrl }),
    async stop() {
      await sql.end({ timeout: 5 });
      await stack.stop();
      await database.drop();
    },
  };
}
