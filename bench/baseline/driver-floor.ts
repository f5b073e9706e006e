/**
 * The floor of a notes function's cold start: the libraries every notes function needs for its first answer (the
 * Postgres driver, zod, jose) loaded, and that answer after one connection to Postgres and one query, as a notes
 * function's first request makes them; none of the service's own code. Its cold start against the hello world's is
 * what those libraries and the first connection cost, which no function can go below while it uses them.
 */
import pg from "pg";
import "zod";
import "jose";

Deno.serve(async () => {
  const client = new pg.Client({ connectionString: Deno.env.get("DATABASE_URL") });
  await client.connect();
  try {
    const { rows } = await client.query("select 1 as one");
    return new Response(String(rows[0].one));
  } finally {
    await client.end();
  }
});
