/**
 * Turns an endpoint's core into a `Request -> Response` handler: CORS
 * preflight, method check, the `apikey` check of auth endpoints, the refusal
 * of query parameters the endpoint does not take, the request id, the
 * request's database deadline, one structured log line, and the mapping of
 * every thrown error to the endpoint's envelope (whose builders add the
 * headers every answer carries). This is the one place errors become
 * responses.
 *
 * @example
 * ```ts
 * export const handler = defineEndpoint({
 *   name: "notes-fetch", envelope: "notes", methods: ["GET"], queries: { GET: listNotesQuery },
 *   handle: async (req) => notesSuccess(200, "Notes fetched successfully", readQuery(req, listNotesQuery)),
 * });
 * ```
 */
import type { z } from "zod";
import { getConfig } from "../config/mod.ts";
import { withDatabaseDeadline } from "./request-deadline.ts";
import { preflightResponse } from "./cors.ts";
import type { EnvelopeKind } from "../contract/envelopes.ts";
import { answerHeaders, errorResponse } from "./envelopes.ts";
import { HttpError, MethodNotAllowedError } from "./errors.ts";
import { requireApiKey } from "./api-key.ts";
import { describeError, logRequest } from "./log.ts";
import { refuseUnknownParameters } from "./request.ts";
import type { ConnectionInfo } from "./client-address.ts";

/** A function's handler; `Deno.serve` passes `info`, which the per-address login limit reads. */
export type Handler = (req: Request, info?: ConnectionInfo) => Promise<Response>;

export interface EndpointDefinition {
  /** The function's name, for logs. */
  name: string;
  envelope: EnvelopeKind;
  /** Methods served besides `OPTIONS`. */
  methods: readonly string[];
  /**
   * The query each method takes, by method: the schema its handler reads it
   * with (`readQuery`). A parameter it does not name, and any parameter of a
   * method not listed, is a 400 naming it before the handler runs.
   */
  queries?: Readonly<Record<string, z.ZodObject>>;
  /**
   * A browser navigates here (a provider sign-in's start and callback), so no `apikey` header can come: the
   * endpoint is reached by its URL alone, as OAuth 2.0 requires.
   */
  browserNavigation?: boolean;
  handle: Handler;
}

async function respond(definition: EndpointDefinition, req: Request, info?: ConnectionInfo): Promise<Response> {
  const { envelope, methods, handle, name } = definition;
  try {
    if (req.method === "OPTIONS") return preflightResponse(methods, answerHeaders[envelope]);
    if (!methods.includes(req.method)) throw new MethodNotAllowedError(methods);
    // Auth endpoints are called before the client has a token, so the project key gates them.
    if (envelope === "auth" && !definition.browserNavigation) requireApiKey(req, getConfig().apiKeys);
    // Before the handler: nothing is done for a request that asks for something the endpoint does not know.
    refuseUnknownParameters(req, definition.queries?.[req.method]);
    return await handle(req, info);
  } catch (error) {
    if (error instanceof HttpError) {
      return errorResponse(envelope, error.code, error.message, error.details, error.headers);
    }
    // The detail stays in the server log; the client gets a generic message.
    console.error(JSON.stringify({ level: "error", function: name, error: describeError(error) }));
    return errorResponse(envelope, "internal_error", "Internal server error");
  }
}

const requestIdPattern = /^[A-Za-z0-9._-]{8,100}$/;

/** A caller's or proxy's request id when it is a plain token, else a fresh one. */
function requestIdOf(req: Request): string {
  const given = req.headers.get("x-request-id");
  return given && requestIdPattern.test(given) ? given : crypto.randomUUID();
}

/** Builds the handler of one endpoint. */
export function defineEndpoint(definition: EndpointDefinition): Handler {
  return async (req, info) => {
    const started = performance.now();
    const requestId = requestIdOf(req);
    const response = await withDatabaseDeadline(() => respond(definition, req, info));
    // Every other header came with the response (`answerHeaders`); only the id is this request's own.
    response.headers.set("x-request-id", requestId);
    logRequest({
      requestId,
      function: definition.name,
      method: req.method,
      status: response.status,
      durationMs: Math.round(performance.now() - started),
    });
    return response;
  };
}
