/**
 * The local stand-in for Supabase's functions relay: serves every function
 * under `/functions/v1/<name>[/<subpath>]`. The request is handed over as it
 * came: functions read only the path below their own name and the query, so
 * they need no rewritten copy (which costs a body stream per request). It also
 * serves the API's documentation at `/openapi.json` and `/docs`, and Storage's
 * endpoints under `/storage/v1/` as Supabase's gateway does.
 */
import type { Handler } from "../supabase/functions/_shared/http/endpoint.ts";
import { serveApiDocs } from "./api-docs.ts";
import { functionNames, functionsDir } from "./functions.ts";

/** Imports the handler of every function. */
export async function loadFunctions(): Promise<Map<string, Handler>> {
  const handlers = new Map<string, Handler>();
  for (const name of await functionNames()) {
    const module: { handler: Handler } = await import(new URL(`${name}/handler.ts`, functionsDir).href);
    handlers.set(name, module.handler);
  }
  return handlers;
}

function notFound(message: string): Response {
  return Response.json({ code: "NOT_FOUND", message }, { status: 404 });
}

/** Serves `/storage/v1/...` (`local-storage.ts`); undefined for any other path. */
export type StorageRoutes = (req: Request, pathname: string) => Promise<Response> | undefined;

/** A handler routing `/functions/v1/<name>` to the function called `name`, and `/storage/v1/` to `storage`. */
export function createGateway(functions: Map<string, Handler>, storage: StorageRoutes): Handler {
  return (req, info) => {
    const { pathname } = new URL(req.url);
    const match = /^\/functions\/v1\/([^/]+)(?:\/.*)?$/.exec(pathname);
    const handler = match ? functions.get(match[1]) : undefined;
    if (handler) return handler(req, info);
    return storage(req, pathname) ?? serveApiDocs(req, pathname) ??
      Promise.resolve(notFound("Requested function was not found"));
  };
}
