/**
 * CORS for browser apps on other origins, with Supabase's canonical header
 * list so the headers supabase-js sends are always allowed, plus `x-region`:
 * the header that pins a call to one region (supabase-js sends it for
 * `functions.invoke(name, { region })`), which that list lacks.
 */
import { corsHeaders } from "@supabase/supabase-js/cors";

/** Headers every response carries so browsers may read it. */
export const corsResponseHeaders: Readonly<Record<string, string>> = {
  ...corsHeaders,
  "Access-Control-Allow-Headers": `${corsHeaders["Access-Control-Allow-Headers"]}, x-region`,
  "Access-Control-Expose-Headers": "x-request-id, retry-after, www-authenticate",
};

/** The answer to an `OPTIONS` preflight for an endpoint serving `methods`. */
export function preflightResponse(methods: readonly string[]): Response {
  return new Response(null, {
    status: 204,
    headers: {
      ...corsResponseHeaders,
      "Access-Control-Allow-Methods": [...methods, "OPTIONS"].join(", "),
      "Access-Control-Max-Age": "86400",
    },
  });
}
