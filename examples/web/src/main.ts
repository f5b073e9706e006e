/**
 * The demo app: accounts and notes through the typed client of shared/, on a
 * different origin than the functions, so every call is a real CORS request.
 */
import { createNotesClient, type Note, type Session } from "../../../shared/index.ts";
import { byId, onSubmit } from "./dom.ts";
import { reportErrors, showInfo } from "./messages.ts";
import { noteItem } from "./note-item.ts";
import { loadSession, saveSession } from "./saved-session.ts";

const pageSize = 5;

let session = loadSession();
let offset = 0;
const client = createNotesClient({
  url: import.meta.env.VITE_NOTES_URL,
  anonKey: import.meta.env.VITE_NOTES_ANON_KEY,
  // The session expired or was revoked: back to the login form; the failed call shows why.
  onUnauthorized: () => forgetSession(),
});
if (session) client.setAccessToken(session.accessToken, session.expiresAt);

const signedOut = byId("signed-out", HTMLElement);
const signedIn = byId("signed-in", HTMLElement);
const who = byId("who", HTMLParagraphElement);
const logout = byId("logout", HTMLButtonElement);
const list = byId("notes", HTMLUListElement);
const summary = byId("page-summary", HTMLParagraphElement);
const previous = byId("previous-page", HTMLButtonElement);
const next = byId("next-page", HTMLButtonElement);

function showSignedIn(): void {
  signedOut.hidden = Boolean(session);
  signedIn.hidden = !session;
  logout.hidden = !session;
  who.hidden = !session;
  who.textContent = session ? `Signed in as ${session.payload.name} (${session.payload.email})` : "";
}

async function signIn(newSession: Session, message: string): Promise<void> {
  session = newSession;
  saveSession(session);
  offset = 0;
  showSignedIn();
  await showNotes();
  showInfo(message);
}

function listItem(note: Note): HTMLLIElement {
  return noteItem(note, {
    save: (changes) =>
      reportErrors(async () => {
        await client.saveNote({ id: note.id, ...changes });
        await showNotes();
        showInfo("Note saved");
      }),
    remove: () =>
      reportErrors(async () => {
        await client.deleteNote(note.id);
        await showNotes();
        showInfo("Note deleted");
      }),
  });
}

/** Shows the page at `offset`, stepping back when a deletion emptied it. */
async function showNotes(): Promise<void> {
  let page = await client.listNotes({ limit: pageSize, offset });
  while (page.notes.length === 0 && offset > 0) {
    offset = Math.max(0, offset - pageSize);
    page = await client.listNotes({ limit: pageSize, offset });
  }
  const { total, hasMore } = page.pagination;
  summary.textContent = total === 0 ? "No notes yet" : `Notes ${offset + 1}–${offset + page.notes.length} of ${total}`;
  list.replaceChildren(...page.notes.map(listItem));
  previous.disabled = offset === 0;
  next.disabled = !hasMore;
}

onSubmit("register-form", ({ name, email, password }) =>
  reportErrors(async () => {
    const registered = await client.register({ name, email, password });
    await signIn(registered, `Welcome, ${registered.payload.name}: your account is ready`);
  }));

onSubmit("login-form", ({ email, password }) =>
  reportErrors(async () => {
    await signIn(await client.login({ email, password }), "Logged in");
  }));

onSubmit("reset-request-form", ({ email }) =>
  reportErrors(async () => {
    showInfo(await client.requestPasswordReset({ email }));
    // The code arrives for this email, so the next form starts with it filled in.
    const resetEmail = byId("reset-form", HTMLFormElement).elements.namedItem("email");
    if (resetEmail instanceof HTMLInputElement) resetEmail.value = email;
  }));

onSubmit("reset-form", ({ email, code, password }) =>
  reportErrors(async () => {
    await signIn(await client.createPassword({ email, code, password }), "Password changed: you are signed in");
  }));

onSubmit("create-form", ({ title, content, status }, form) =>
  reportErrors(async () => {
    await client.createNote({ title, content, status: status === "PUBLISHED" ? "PUBLISHED" : "DRAFT" });
    form.reset();
    offset = 0;
    await showNotes();
    showInfo("Note created");
  }));

previous.addEventListener("click", () =>
  reportErrors(async () => {
    offset = Math.max(0, offset - pageSize);
    await showNotes();
  }));

next.addEventListener("click", () =>
  reportErrors(async () => {
    offset += pageSize;
    await showNotes();
  }));

/** Signs out locally: there is no server-side session to end (tokens are stateless). */
function forgetSession(): void {
  session = undefined;
  saveSession(undefined);
  client.signOut();
  list.replaceChildren();
  showSignedIn();
}

logout.addEventListener("click", () => {
  forgetSession();
  showInfo("Logged out");
});

showSignedIn();
if (session) void reportErrors(showNotes);
