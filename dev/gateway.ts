/**
 * The local stand-in for Supabase's functions relay: serves every function
 * under `/functions/v1/<name>[/<subpath>]`. The request is handed over as it
 * came: functions read only the path below their own name and the query, so
 * they need no rewritten copy (which costs a body stream per request). It also
 * serves the API's documentation at `/openapi.json` and `/docs`, and Storage's
 * endpoints under `/storage/v1/` as Supabase's gateway does.
 */
import type { Handler } from "../supabase/functions/_shared/http/endpoint.ts";
import { loadedOnFirstRequest } from "../supabase/functions/_shared/http/router.ts";
import { serveApiDocs } from "./api-docs.ts";
import { functionNames, functionsDir } from "./functions.ts";

/**
 * The handler of every function in `dir`, each imported on its function's first request, as Supabase's relay boots
 * a function's worker only when a request for it comes: a stack starts without loading what no request asks for. A
 * function whose module fails to load answers 503 `BOOT_ERROR`, as the relay does, with the reason in the log.
 */
export async function functionHandlers(dir = functionsDir): Promise<Map<string, Handler>> {
  const handlers = new Map<string, Handler>();
  for (const name of await functionNames(dir)) {
    const boot = () =>
      import(new URL(`${name}/handler.ts`, dir).href).catch((error) => {
        console.error(JSON.stringify({ level: "error", function: name, event: "boot failed", error: String(error) }));
        return { handler: bootFailed };
      });
    handlers.set(name, loadedOnFirstRequest(boot));
  }
  return handlers;
}

/** The relay's answer for a function that could not start (the Supabase CLI's `functions serve` main worker). */
const bootFailed: Handler = () =>
  Promise.resolve(
    Response.json({ code: "BOOT_ERROR", message: "Worker failed to boot (please check logs)" }, { status: 503 }),
  );

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
