/**
 * Routing inside one function by the path after the function's name, as a
 * Supabase function sees it (`/auth/login`), also tolerating the gateway's
 * `/functions/v1` prefix.
 */
import { corsResponseHeaders } from "./cors.ts";
import type { Handler } from "./endpoint.ts";
import { errorResponse } from "./envelopes.ts";

/** The path below `/<functionName>`, or undefined when the URL is not under it. */
export function subpathOf(url: string, functionName: string): string | undefined {
  const pathname = new URL(url).pathname.replace(/^\/functions\/v1(?=\/)/, "");
  const prefix = `/${functionName}`;
  if (pathname !== prefix && !pathname.startsWith(`${prefix}/`)) return undefined;
  return pathname.slice(prefix.length).replace(/\/+$/, "") || "/";
}

/** A handler that dispatches to `routes` by subpath, with a 404 in the auth envelope otherwise. */
export function routeBySubpath(functionName: string, routes: Record<string, Handler>): Handler {
  return (req, info) => {
    const subpath = subpathOf(req.url, functionName);
    const route = subpath !== undefined && Object.hasOwn(routes, subpath) ? routes[subpath] : undefined;
    if (route) return route(req, info);
    const response = errorResponse("auth", 404, `No such endpoint: /${functionName}${subpath ?? ""}`);
    for (const [header, value] of Object.entries(corsResponseHeaders)) response.headers.set(header, value);
    return Promise.resolve(response);
  };
}
