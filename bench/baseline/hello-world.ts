/** The least a function can be: what a cold start costs before any of the service's code loads. */
Deno.serve(() => new Response("hello"));
