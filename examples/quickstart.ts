/**
 * The typed client in a few lines, as the README shows it. Run it with the
 * local stack up (`npm start`):
 *
 *   npx deno run --allow-net --allow-env examples/quickstart.ts
 *
 * NOTES_URL and NOTES_ANON_KEY point it at another stack.
 */
import { createNotesClient, NotesApiError } from "../shared/index.ts";

const client = createNotesClient({
  url: Deno.env.get("NOTES_URL") ?? "http://127.0.0.1:54321/functions/v1",
  anonKey: Deno.env.get("NOTES_ANON_KEY") ?? "local-dev-anon-key-not-for-production",
});

// register, login and createPassword keep the access token for the calls that follow.
const email = `ada-${crypto.randomUUID().slice(0, 8)}@example.com`;
const { payload: user } = await client.auth.register({
  name: "Ada Lovelace",
  email,
  password: "correct horse battery",
});
console.log(`registered ${user.email} (${user.id})`);

const note = await client.notes.create({ title: "Groceries", content: "Eggs, flour, milk" });
await client.notes.save({ id: note.id, status: "PUBLISHED" });

for await (const page of client.notes.pages({ limit: 50 })) {
  for (const { status, title } of page.notes) console.log(`${status} ${title}`);
}

try {
  await client.notes.delete("no-such-note");
} catch (error) {
  if (!(error instanceof NotesApiError)) throw error;
  console.log(`${error.status} ${error.message}`); // 404 Note not found
}
