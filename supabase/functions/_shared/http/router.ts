/**
 * Routing inside one function by the path after the function's name, as a
 * Supabase function sees it (`/auth/login`), also tolerating the gateway's
 * `/functions/v1` prefix.
 */
import { z } from "zod";
import { defineEndpoint, type Handler } from "./endpoint.ts";
import { NotFoundError } from "./errors.ts";

/** The path below `/<functionName>`, or undefined when the URL is not under it. */
export function subpathOf(url: string, functionName: string): string | undefined {
  const pathname = new URL(url).pathname.replace(/^\/functions\/v1(?=\/)/, "");
  const prefix = `/${functionName}`;
  if (pathname !== prefix && !pathname.startsWith(`${prefix}/`)) return undefined;
  return pathname.slice(prefix.length).replace(/\/+$/, "") || "/";
}

/**
 * A handler that dispatches to `routes` by subpath. Any other path gets a 404
 * in the auth envelope through `defineEndpoint`, with the same headers, apikey
 * check and log line as every other answer.
 */
export function routeBySubpath(functionName: string, routes: Record<string, Handler>): Handler {
  const methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];
  const notFound = defineEndpoint({
    name: functionName,
    envelope: "auth",
    methods,
    // Whatever its query, a path of no endpoint is a 404.
    queries: Object.fromEntries(methods.map((method) => [method, z.looseObject({})])),
    handle: (req) => {
      throw new NotFoundError(
        "endpoint_not_found",
        `No such endpoint: /${functionName}${subpathOf(req.url, functionName) ?? ""}`,
      );
    },
  });
  return (req, info) => {
    const subpath = subpathOf(req.url, functionName);
    const route = subpath !== undefined && Object.hasOwn(routes, subpath) ? routes[subpath] : undefined;
    return (route ?? notFound)(req, info);
  };
}
