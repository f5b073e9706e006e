/**
 * The same calls as the quickstart, through supabase-js's `functions.invoke`
 * instead of the typed client. Run it with the local stack up (`npm start`):
 *
 *   npx deno run --allow-net --allow-env examples/supabase-invoke.ts
 *
 * NOTES_URL (the functions' base URL) and NOTES_ANON_KEY point it at another stack.
 */
import { createClient, FunctionsHttpError } from "@supabase/supabase-js";

const functionsUrl = Deno.env.get("NOTES_URL") ?? "http://127.0.0.1:54321/functions/v1";
// supabase-js takes the project URL and adds /functions/v1 itself.
const supabase = createClient(
  new URL(functionsUrl).origin,
  Deno.env.get("NOTES_ANON_KEY") ?? "local-dev-anon-key-not-for-production",
);

const email = `ada-${crypto.randomUUID().slice(0, 8)}@example.com`;
const registered = await supabase.functions.invoke("auth/register", {
  body: { name: "Ada Lovelace", email, password: "correct horse battery" },
});
if (registered.error) throw registered.error;
// accessToken already reads "Bearer <jwt>"; it replaces the anon key supabase-js sends by default.
const headers = { Authorization: registered.data.data.accessToken };

const created = await supabase.functions.invoke("notes-create", { headers, body: { title: "Groceries" } });
console.log(created.data.message); // Note created successfully

const listed = await supabase.functions.invoke("notes-fetch?limit=10", { method: "GET", headers });
for (const note of listed.data.data.notes) console.log(`${note.status} ${note.title}`);

const failed = await supabase.functions.invoke("notes-create", { headers, body: {} });
if (failed.error instanceof FunctionsHttpError) {
  const response: Response = failed.error.context;
  console.log(response.status, (await response.json()).error); // 400 At least one of title or content is required
}
