// A stock Vite `vanilla-ts` app (its tsconfig unchanged) using the client
// package: sign in, list the notes, and show each kind of failure as a user
// should see it.
import { createNotesClient, type Note, NotesApiError } from "@notes-service/client";

const app = document.querySelector<HTMLDivElement>("#app")!;

const client = createNotesClient({
  url: import.meta.env.VITE_NOTES_URL ?? "http://127.0.0.1:54321/functions/v1",
  anonKey: import.meta.env.VITE_NOTES_ANON_KEY ?? "local-dev-anon-key-not-for-production",
  onUnauthorized: (error) => show(error.code === "session_expired" ? "Your session expired; log in again." : "Log in."),
});

function show(message: string): void {
  app.textContent = message;
}

/** What to tell the user about a failed call. */
function explain(error: unknown): string {
  if (!(error instanceof NotesApiError)) throw error;
  if (error.status === 0) return "Cannot reach the service; check your connection.";
  if (error.status === 429 || error.status === 503) return `Busy; try again in ${error.retryAfter ?? 5} s.`;
  if (error.status === 400) {
    return error.fields.map(({ field, message }) => `${field ?? "form"}: ${message}`).join("\n");
  }
  return error.message;
}

function render(notes: readonly Note[]): void {
  const list = document.createElement("ul");
  for (const note of notes) {
    const item = document.createElement("li");
    item.textContent = `${note.title || "(untitled)"} (${note.status})`;
    list.append(item);
  }
  app.replaceChildren(list);
}

async function start(email: string, password: string): Promise<void> {
  try {
    const session = await client.auth.login({ email, password });
    console.info(`signed in until ${new Date(session.expiresAt).toLocaleTimeString()}`);
    render((await client.notes.list({ limit: 20 })).notes);
  } catch (error) {
    show(explain(error));
  }
}

void start("ada@example.com", "correct horse battery");
