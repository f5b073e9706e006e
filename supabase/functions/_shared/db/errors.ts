/**
 * What a driver or Postgres error means to a request: the database being
 * unavailable (a 503), a duplicate key, a refused constraint, or its SQLSTATE.
 */
// @ts-types="@types/pg"
import pg from "pg";
import { ServiceUnavailableError } from "../http/errors.ts";

/** SQLSTATEs that mean the database is overloaded or going away, not that the statement is wrong. */
const unavailableStates = new Set([
  "57014", // query_canceled: the statement timeout fired
  "57P01", // admin_shutdown
  "57P03", // cannot_connect_now: the server is starting or stopping
  "53300", // too_many_connections
  "08000", // connection_exception, and the pooler's own refusals below
  "08003",
  "08006",
]);

/** An error that Postgres itself sent: the connection that carried it is still usable. */
export function isServerError(error: unknown): boolean {
  return error instanceof pg.DatabaseError;
}

/** How Node and node-postgres report a connection that failed, closed or stopped answering. */
const connectionFailureCodes = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH"]);
const connectionFailureMessages = [
  "Connection terminated", // closed by the server, a pooler or the network, or the connect timeout
  "timeout exceeded when trying to connect", // the pool found no connection within its timeout
  "Query read timeout", // no answer by the statement timeout and its margin (a silent database)
  "not queryable", // a connection that already failed
];

/** True for errors that mean the database is unreachable or overloaded, not that the statement is wrong. */
function isUnavailable(error: unknown): boolean {
  if (isServerError(error)) return unavailableStates.has(pgErrorCode(error) ?? "");
  if (!(error instanceof Error)) return false;
  return connectionFailureCodes.has(pgErrorCode(error) ?? "") ||
    connectionFailureMessages.some((message) => error.message.includes(message));
}

/** `error` as a 503 when it means the database is unavailable, else as it was. */
export function unavailableOr(error: unknown): unknown {
  return isUnavailable(error) ? new ServiceUnavailableError({ cause: error }) : error;
}

/** True when `error` is Postgres refusing a duplicate key (unique_violation). */
export function isUniqueViolation(error: unknown): boolean {
  return pgErrorCode(error) === "23505";
}

/** True when `error` is Postgres refusing a row because of constraint `constraint` (any integrity violation). */
export function violatesConstraint(error: unknown, constraint: string): boolean {
  const integrityViolation = pgErrorCode(error)?.startsWith("23") ?? false;
  return integrityViolation && error instanceof pg.DatabaseError && error.constraint === constraint;
}

/** The Postgres error code of a driver error, if it has one. */
export function pgErrorCode(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : undefined;
}
