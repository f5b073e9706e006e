// A plain Node 20 ES module using the client package, with no TypeScript
// loader. In an app: install the packed client (`npm run pack:client` in the
// service's repository makes .pack/notes-service-client-1.0.0.tgz), then run
// `node node-app.mjs` with the local stack up. From the repository itself:
// `npm install --no-save .pack/notes-service-client-1.0.0.tgz`, then
// `node examples/frontend/node-app.mjs`. NOTES_URL and NOTES_ANON_KEY point it
// at another stack.
import { createNotesClient, NotesApiError } from "@notes-service/client";

const url = process.env.NOTES_URL ?? "http://127.0.0.1:54321/functions/v1";
const anonKey = process.env.NOTES_ANON_KEY ?? "local-dev-anon-key-not-for-production";

const client = createNotesClient({
  url,
  anonKey,
  // The session ended (a refresh answered 401) lands here, after the client has dropped it.
  onUnauthorized: (error) => console.log(`signed out: ${error.code}`),
});

const email = `node-${crypto.randomUUID().slice(0, 8)}@example.com`;
const session = await client.auth.register({ name: "Node App", email, password: "correct horse battery" });
console.log(`registered ${session.payload.email}; the token expires at ${session.expiresAt}`);

await client.notes.create({ title: "Written from Node" });
const page = await client.notes.list();
console.log(`listed ${page.pagination.total}: ${page.notes.map((note) => note.title).join(", ")}`);

try {
  await client.notes.create({ title: "", content: "x".repeat(100_001) });
} catch (error) {
  if (!(error instanceof NotesApiError)) throw error;
  for (const { field, message } of error.fields) console.log(`${error.status} ${field}: ${message}`);
}

await client.auth.signOut(); // ends the session on the server too
// With no session, a call that needs one throws NotesApiError 401 not_signed_in and sends nothing.
await client.notes.list().catch((error) => console.log(`${error.status} ${error.code} ${error.message}`));

const unreachable = createNotesClient({ url: "http://127.0.0.1:9/functions/v1", anonKey });
await unreachable.auth.login({ email, password: "correct horse battery" }).catch((error) => {
  console.log(`${error instanceof NotesApiError ? "NotesApiError" : "other"} ${error.status} ${error.message}`);
});
