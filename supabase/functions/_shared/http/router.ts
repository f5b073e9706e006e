/**
 * Routing inside one function by the path after the function's name, as a
 * Supabase function sees it (`/auth/login`), also tolerating the gateway's
 * `/functions/v1` prefix.
 */
import { z } from "zod";
import { defineEndpoint, type Handler } from "./endpoint.ts";
import { NotFoundError } from "./errors.ts";

/**
 * A handler whose module loads on its first request, so a router starts without loading every route's libraries.
 * Concurrent first requests share one load. A load that fails rejects the request (`routeBySubpath` answers it with
 * a 500 in its envelope), and the next request imports again; a module that threw while it ran stays failed, as the
 * module system keeps its error. Write `load` as `() => import("<relative path>")`, the specifier a literal on one
 * line: the CLI's deploy finds the files to upload by matching that text.
 */
export function loadedOnFirstRequest(load: () => Promise<{ handler: Handler }>): Handler {
  let loading: Promise<Handler> | undefined;
  return async (req, info) => {
    loading ??= load().then((module) => module.handler, (error) => {
      loading = undefined;
      throw error;
    });
    return (await loading)(req, info);
  };
}

/** The path below `/<functionName>`, or undefined when the URL is not under it. */
export function subpathOf(url: string, functionName: string): string | undefined {
  const pathname = new URL(url).pathname.replace(/^\/functions\/v1(?=\/)/, "");
  const prefix = `/${functionName}`;
  if (pathname !== prefix && !pathname.startsWith(`${prefix}/`)) return undefined;
  return pathname.slice(prefix.length).replace(/\/+$/, "") || "/";
}

/**
 * A handler that dispatches to `routes` by subpath; a route ending in `/*` serves every path one segment below it
 * (`/oauth/callback/*`: `/oauth/callback/google`). Any other path gets a 404
 * in the auth envelope through `defineEndpoint`, with the same headers, apikey
 * check and log line as every other answer.
 */
export function routeBySubpath(functionName: string, routes: Record<string, Handler>): Handler {
  const methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];
  // Whatever its query, a path of no endpoint is a 404, and a route that failed a 500.
  const anyQuery = Object.fromEntries(methods.map((method) => [method, z.looseObject({})]));
  const notFound = defineEndpoint({
    name: functionName,
    envelope: "auth",
    methods,
    queries: anyQuery,
    handle: (req) => {
      throw new NotFoundError(
        "endpoint_not_found",
        `No such endpoint: /${functionName}${subpathOf(req.url, functionName) ?? ""}`,
      );
    },
  });
  // A route that failed to load, answered as every endpoint answers a fault: a 500 in the envelope, logged.
  const failed = (error: unknown) =>
    defineEndpoint({
      name: functionName,
      envelope: "auth",
      methods,
      queries: anyQuery,
      // The route's own checks never ran; the answer is the same 500 whatever the request held.
      browserNavigation: true,
      handle: () => Promise.reject(error),
    });
  return async (req, info) => {
    const subpath = subpathOf(req.url, functionName);
    const wildcard = subpath?.replace(/\/[^/]+$/, "/*");
    const route = subpath === undefined
      ? undefined
      : Object.hasOwn(routes, subpath)
      ? routes[subpath]
      : wildcard !== undefined && Object.hasOwn(routes, wildcard)
      ? routes[wildcard]
      : undefined;
    try {
      return await (route ?? notFound)(req, info);
    } catch (error) {
      return await failed(error)(req, info);
    }
  };
}
