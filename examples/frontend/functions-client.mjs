// supabase-js's createClient needs a native WebSocket, which Node has from 22
// on. On Node 20, FunctionsClient from @supabase/functions-js (the piece of
// supabase-js that calls functions) makes the same calls: install it beside
// the app and run `node functions-client.mjs` with the local stack up.
import { FunctionsClient, FunctionsHttpError } from "@supabase/functions-js";

const url = process.env.NOTES_URL ?? "http://127.0.0.1:54321/functions/v1";
const anonKey = process.env.NOTES_ANON_KEY ?? "local-dev-anon-key-not-for-production";
const functions = new FunctionsClient(url, { headers: { apikey: anonKey } });

const email = `functions-${crypto.randomUUID().slice(0, 8)}@example.com`;
const registered = await functions.invoke("auth/register", {
  body: { name: "Functions Client", email, password: "correct horse battery" },
});
if (registered.error) throw registered.error;
// accessToken already reads "Bearer <jwt>".
const headers = { Authorization: registered.data.data.accessToken };

await functions.invoke("notes-create", { headers, body: { title: "From FunctionsClient" } });
const listed = await functions.invoke("notes-fetch?limit=10", { method: "GET", headers });
for (const note of listed.data.data.notes) console.log(`${note.status} ${note.title}`);

const failed = await functions.invoke("notes-create", { headers, body: {} });
if (failed.error instanceof FunctionsHttpError) {
  const response = failed.error.context;
  console.log(response.status, (await response.json()).error); // 400 At least one of title or content is required
}
