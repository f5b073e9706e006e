/**
 * CORS for browser apps on other origins, with Supabase's canonical header
 * list so the headers supabase-js sends are always allowed, plus two that
 * list lacks: `x-region`, the header that pins a call to one region
 * (supabase-js sends it for `functions.invoke(name, { region })`),
 * `idempotency-key`, which makes a browser's retried create safe, and
 * `last-event-id`, with which a client resumes a live update stream.
 */
import { corsHeaders } from "@supabase/supabase-js/cors";

/**
 * What a browser reads from an actual (non-preflight) response: who may read
 * it, and which of its headers a script may see. The allowed methods and
 * request headers matter only in the preflight's answer (the Fetch standard's
 * CORS check reads nothing else), so only the preflight carries them.
 */
export const corsResponseHeaders: Readonly<Record<string, string>> = {
  "Access-Control-Allow-Origin": corsHeaders["Access-Control-Allow-Origin"],
  "Access-Control-Expose-Headers": "x-request-id, retry-after, www-authenticate",
};

/** The answer to an `OPTIONS` preflight for an endpoint serving `methods`, with the endpoint's own `headers`. */
export function preflightResponse(methods: readonly string[], headers: Readonly<Record<string, string>>): Response {
  return new Response(null, {
    status: 204,
    headers: {
      ...headers,
      "Access-Control-Allow-Headers": `${
        corsHeaders["Access-Control-Allow-Headers"]
      }, x-region, idempotency-key, last-event-id`,
      "Access-Control-Allow-Methods": [...methods, "OPTIONS"].join(", "),
      "Access-Control-Max-Age": "86400",
    },
  });
}
