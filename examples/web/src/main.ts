/**
 * The demo app: accounts and notes through the typed client of shared/, on a
 * different origin than the functions, so every call is a real CORS request.
 * The session lives in localStorage through the client, so it survives
 * reloads and every tab shares it: a refresh or a sign-out in one tab shows
 * in the others. While signed in, the list follows the notes live
 * (`watchChanges`): a note created, edited or deleted in another tab or
 * device shows without a reload.
 */
import {
  createNotesClient,
  type ListNotesOptions,
  localSessionStorage,
  type Note,
  type NoteChange,
  type NoteChanges,
  noteConflictCode,
  NotesApiError,
  type WatchStatus,
} from "../../../shared/index.ts";
import { accountItem, eventItem } from "./admin-item.ts";
import { byId, onSubmit } from "./dom.ts";
import { reportErrors, showError, showInfo } from "./messages.ts";
import { holdsUnsavedWork, noteItem } from "./note-item.ts";
import { noteAttachments, shownBytes, sizeText } from "./note-attachments.ts";
import { showPasswordForms } from "./password-forms.ts";
import { providersPanel } from "./providers.ts";
import { secondFactorPanel } from "./second-factor.ts";
import { passkeysPanel } from "./passkeys.ts";
import { sessionItem } from "./session-item.ts";
import { signingIn, visitorPanel } from "./visitor.ts";

const pageSize = 5;

let offset = 0;
/** How many notes the list's filters match in all, as last read. */
let total = 0;
/** What the list shows: every note, or those of one status, or those holding the searched words. */
let filters: Pick<ListNotesOptions, "q" | "status"> = {};
const filtered = () => filters.q !== undefined || filters.status !== undefined;
const client = createNotesClient({
  url: import.meta.env.VITE_NOTES_URL,
  anonKey: import.meta.env.VITE_NOTES_ANON_KEY,
  storage: localSessionStorage("notes-demo-session"),
});

const signedOut = byId("signed-out", HTMLElement);
const signedIn = byId("signed-in", HTMLElement);
const secondStep = byId("second-step", HTMLElement);
const verifyCodeForm = byId("mfa-verify-form", HTMLFormElement);
const recoverForm = byId("mfa-recover-form", HTMLFormElement);
const who = byId("who", HTMLParagraphElement);
const logout = byId("logout", HTMLButtonElement);
const logoutEverywhere = byId("logout-everywhere", HTMLButtonElement);
const sessionList = byId("sessions", HTMLUListElement);
const verifyForm = byId("verify-form", HTMLFormElement);
const list = byId("notes", HTMLUListElement);
const summary = byId("page-summary", HTMLParagraphElement);
const spaceUsed = byId("space-used", HTMLParagraphElement);
const previous = byId("previous-page", HTMLButtonElement);
const next = byId("next-page", HTMLButtonElement);
const liveStatus = byId("live-status", HTMLParagraphElement);
const account = byId("account", HTMLDetailsElement);
const adminSection = byId("admin", HTMLElement);
const adminUsers = byId("admin-users", HTMLUListElement);
const adminEvents = byId("admin-events", HTMLUListElement);
const adminEventsHeading = byId("admin-events-heading", HTMLHeadingElement);
let adminQuery = "";
const secondFactor = secondFactorPanel(client);
const providers = providersPanel(client);
const passkeys = passkeysPanel(client, signedInWith);
const visitor = visitorPanel(client, signedInWith);

function showSignedIn(): void {
  const session = client.session;
  // A session that has not made the second step reaches nothing but it: the page asks for the code first.
  const needsSecondStep = session?.mfaRequired === true;
  // A visitor (an anonymous account) writes notes at once, and sees the sign-in forms only when it asks for them.
  const anonymous = session?.payload.isAnonymous === true;
  const showsSignIn = !session || (anonymous && signingIn());
  signedOut.hidden = !showsSignIn;
  signedIn.hidden = !session || needsSecondStep || showsSignIn;
  secondStep.hidden = !needsSecondStep;
  // Signing a visitor out would leave its notes behind: it signs up, or signs in to an account, instead.
  logout.hidden = !session || anonymous;
  logoutEverywhere.hidden = !session || needsSecondStep || anonymous;
  // Nothing of the account shows before the second step: whoever has only the password learns no more.
  who.hidden = !session || needsSecondStep;
  who.textContent = !session || needsSecondStep
    ? ""
    : anonymous
    ? "Writing as a visitor"
    : `Signed in as ${session.payload.name} (${session.payload.email})`;
  verifyForm.hidden = !session || session.payload.isVerified || anonymous;
  account.hidden = anonymous;
  visitor.show();
  // Only a hint: the server checks the role on every admin call.
  adminSection.hidden = session?.payload.role !== "ADMIN" || needsSecondStep;
  if (!session || needsSecondStep) {
    list.replaceChildren();
    sessionList.replaceChildren();
    account.open = false;
    secondFactor.clear();
    providers.clear();
    passkeys.clear();
  }
  // Signed out: the email field offers the passkeys (autofill) until one is picked or the user logs in otherwise.
  if (showsSignIn) passkeys.offerAutofill();
  else passkeys.stopAutofill();
  if (!needsSecondStep) {
    verifyCodeForm.hidden = false;
    recoverForm.hidden = true;
  }
  if (adminSection.hidden) {
    adminUsers.replaceChildren();
    adminEvents.replaceChildren();
    adminEventsHeading.hidden = true;
  }
  followChanges();
}

const liveLabels: Record<WatchStatus, string> = {
  connecting: "Connecting…",
  live: "Live",
  reconnecting: "Reconnecting…",
};
/** Stops the watch of the notes' changes, while one runs. */
let watch: AbortController | undefined;

/** Watches the notes' changes while a session that has made its second step is signed in; stops on sign-out. */
function followChanges(): void {
  const wanted = client.session !== undefined && !client.session.mfaRequired;
  if (wanted === (watch !== undefined)) return;
  liveStatus.hidden = !wanted;
  if (!wanted) {
    watch?.abort();
    watch = undefined;
    return;
  }
  const stop = new AbortController();
  watch = stop;
  client.notes.watchChanges({
    onChange: applyChange,
    // Once per connection, caught up: what changed before the watch began shows too.
    onReady: readNotesAgain,
    onStatus: (status) => (liveStatus.textContent = liveLabels[status]),
    signal: stop.signal,
  }).then(
    // Not stopped here, so ended by a reset (its cursor expired while away): watched again from now.
    () => {
      if (watch !== stop) return;
      watch = undefined;
      followChanges();
    },
    (error: unknown) => {
      if (watch === stop) {
        watch = undefined;
        liveStatus.hidden = true;
      }
      showError(error);
    },
  );
}

/** Reads the page shown again, for a change only the service can place; a failure goes on the error line. */
function readNotesAgain(): void {
  showNotes().catch(showError);
}

/** The list's item of the note `id`, if the page shows it. */
function itemOf(id: string): Element | null {
  return list.querySelector(`li[data-note-id="${CSS.escape(id)}"]`);
}

/**
 * Applies a change from the watch to the page: a note shown is updated in
 * place (unless it holds the user's unsaved version, whose save will meet the
 * change as a conflict) or removed, and a new note goes on top of the first
 * page. Where only the service knows where a note falls now (a filtered
 * list, another page, a note moving up from the next page), or while a read
 * of the page is under way, the page is read again.
 */
function applyChange(change: NoteChange): void {
  const item = itemOf(change.id);
  // A read under way may have been answered before this change: it is read again.
  if (filtered() || shownRead !== reads) return readNotesAgain();
  if ("deleted" in change) {
    if (!item || holdsUnsavedWork(item) || offset + shown < total) return readNotesAgain();
    item.remove();
    shown--;
    total--;
  } else if (item) {
    if (!holdsUnsavedWork(item)) item.replaceWith(listItem(change));
    return;
  } else if (offset === 0 && change.createdAt === change.updatedAt) {
    // Never edited, so just created: the newest note, on top; the page keeps its size, and an open editor.
    const last = list.lastElementChild;
    if (shown === pageSize && last && holdsUnsavedWork(last)) return readNotesAgain();
    list.prepend(listItem(change));
    if (shown === pageSize) last?.remove();
    else shown++;
    total++;
  } else {
    return readNotesAgain();
  }
  showSummary();
}

// Signed in, refreshed or signed out, here or in another tab: the page follows; and "Sign in" or back to the notes.
client.onSessionChange(showSignedIn);
addEventListener("hashchange", showSignedIn);

// A local stack prints the codes it mails in its terminal: the forms that ask for one say where.
const codesHint = import.meta.env.VITE_NOTES_CODES_HINT;
for (const hint of document.querySelectorAll<HTMLElement>(".codes-hint")) {
  hint.textContent = `This is a local stack: it prints the codes it mails (verification, password reset) ${codesHint}.`;
  hint.hidden = !codesHint;
}

/** Shows the notes of the session the client has just kept, or asks for its second step first. */
async function signedInWith(message: string): Promise<void> {
  offset = 0;
  showSignedIn();
  if (client.session?.mfaRequired) {
    verifyCodeForm.querySelector("input")?.focus();
    showInfo("Enter the code of your authenticator app");
    return;
  }
  await showNotes();
  showInfo(message);
}

/**
 * Saves `changes` to `note` over version `expectedUpdatedAt`. Answers the
 * stored note when another tab or device saved it first (nothing is saved
 * then), undefined otherwise; any other failure is shown beside the inputs of
 * `form` (the note's editor) or on the error line.
 */
async function saveVersioned(
  note: Note,
  changes: NoteChanges,
  expectedUpdatedAt: string,
  form?: HTMLFormElement,
): Promise<Note | undefined> {
  let theirs: Note | undefined;
  await reportErrors(async () => {
    let saved: Note;
    try {
      saved = await client.notes.save({ id: note.id, ...changes, expectedUpdatedAt });
    } catch (error) {
      if (!(error instanceof NotesApiError && error.code === noteConflictCode && error.note)) throw error;
      theirs = error.note;
      return;
    }
    // Its work is saved: the item goes back to showing the note, so the read below may replace it.
    itemOf(note.id)?.replaceWith(listItem(saved));
    await showNotes();
    showInfo("Note saved");
  }, form);
  return theirs;
}

function listItem(note: Note): HTMLLIElement {
  return noteItem(note, {
    save: (changes, expectedUpdatedAt, form) => saveVersioned(note, changes, expectedUpdatedAt, form),
    takeTheirs: () =>
      reportErrors(async () => {
        // The user's version is dropped: the read below shows the stored one in its place.
        itemOf(note.id)?.replaceWith(listItem(note));
        await showNotes();
        showInfo("Kept the version saved elsewhere");
      }),
    files: () =>
      noteAttachments(client, note, {
        onAttached: () => {
          readNotesAgain();
          showInfo("File attached");
        },
        onShown: showSpaceUsed,
        onError: showError,
      }),
    remove: () =>
      reportErrors(async () => {
        await client.notes.delete(note.id);
        await showNotes();
        showInfo("Note deleted");
      }),
  });
}

/** Reads of the page started, and the one the page shows: an answer a later read overtook is dropped. */
let reads = 0;
let shownRead = 0;
/** How many notes of the page the list shows (an editor kept open beside them not counted). */
let shown = 0;

/**
 * Shows the page at `offset`, stepping back when a deletion emptied it. An
 * item holding the user's unsaved work stays as it is, in the document (with
 * its focus and what is being typed), where its note is now or, when the note
 * has left the page, where it was: no read, and so no change made elsewhere,
 * discards typed text. Only `leaving` the page (to another page or other
 * filters) drops an editor of a note the new page does not show.
 */
async function showNotes({ leaving = false } = {}): Promise<void> {
  const read = ++reads;
  let page = await client.notes.list({ ...filters, limit: pageSize, offset });
  while (page.notes.length === 0 && offset > 0) {
    offset = Math.max(0, offset - pageSize);
    page = await client.notes.list({ ...filters, limit: pageSize, offset });
  }
  if (read !== reads) return;
  shownRead = read;
  total = page.pagination.total;
  shown = page.notes.length;
  showItems(keepingUnsavedWork(page.notes, !leaving));
  showSummary();
}

/** Items for `notes`, with the items holding unsaved work in place of theirs (and, `others`, those of other notes). */
function keepingUnsavedWork(notes: Note[], others: boolean): Element[] {
  const open = new Map<string, { item: Element; index: number }>();
  [...list.children].forEach((item, index) => {
    if (item instanceof HTMLElement && item.dataset.noteId && holdsUnsavedWork(item)) {
      open.set(item.dataset.noteId, { item, index });
    }
  });
  const items: Element[] = notes.map((note) => {
    const kept = open.get(note.id);
    open.delete(note.id);
    return kept?.item ?? listItem(note);
  });
  if (others) { for (const { item, index } of open.values()) items.splice(Math.min(index, items.length), 0, item); }
  return items;
}

/** Makes the list hold `items`, in order, without taking out any it holds already: a moved input loses its focus. */
function showItems(items: Element[]): void {
  const wanted = new Set(items);
  for (const child of [...list.children]) if (!wanted.has(child)) child.remove();
  items.forEach((item, index) => {
    if (list.children[index] !== item) list.insertBefore(item, list.children[index] ?? null);
  });
}

/** Says which notes the list shows, of how many, and which pages there are. */
/** The space the files of the notes shown take, of the account's quota. */
function showSpaceUsed(): void {
  const shownIds = new Set(
    [...list.querySelectorAll("li[data-note-id]")].map((item) => item.getAttribute("data-note-id")),
  );
  for (const id of shownBytes.keys()) if (!shownIds.has(id)) shownBytes.delete(id);
  const bytes = [...shownBytes.values()].reduce((sum, size) => sum + size, 0);
  spaceUsed.textContent = bytes === 0 ? "" : `Files on this page: ${sizeText(bytes)} of your quota`;
}

function showSummary(): void {
  summary.textContent = total === 0
    ? (filtered() ? "No notes match" : "No notes yet")
    : `Notes ${offset + 1}–${offset + shown} of ${total}${filtered() ? " matching" : ""}`;
  previous.disabled = offset === 0;
  next.disabled = offset + shown >= total;
}

onSubmit("register-form", ({ name, email, password }, form) =>
  reportErrors(async () => {
    const registered = await client.auth.register({ name, email, password });
    await signedInWith(`Welcome, ${registered.payload.name}: your account is ready`);
  }, form));

onSubmit("login-form", ({ email, password }, form) =>
  reportErrors(async () => {
    await client.auth.login({ email, password });
    await signedInWith("Logged in");
  }, form));

onSubmit("mfa-verify-form", ({ code }, form) =>
  reportErrors(async () => {
    await client.mfa.verify({ code: code.trim() });
    form.reset();
    await signedInWith("Logged in");
  }, form));

onSubmit("mfa-recover-form", ({ recoveryCode }, form) =>
  reportErrors(async () => {
    const { recoveryCodesLeft } = await client.mfa.recover({ recoveryCode: recoveryCode.trim() });
    form.reset();
    await signedInWith(
      `Logged in with a recovery code: ${recoveryCodesLeft} left` +
        (recoveryCodesLeft < 3 ? ". Remove and set up the second factor again for new ones" : ""),
    );
  }, form));

byId("use-recovery-code", HTMLButtonElement).addEventListener("click", () => {
  verifyCodeForm.hidden = true;
  recoverForm.hidden = false;
  recoverForm.querySelector("input")?.focus();
});

byId("use-app-code", HTMLButtonElement).addEventListener("click", () => {
  recoverForm.hidden = true;
  verifyCodeForm.hidden = false;
  verifyCodeForm.querySelector("input")?.focus();
});

onSubmit("code-request-form", ({ email }, form) =>
  reportErrors(async () => {
    showInfo(await client.auth.sendSignInCode(email));
    const codeEmail = byId("code-sign-in-form", HTMLFormElement).elements.namedItem("email");
    if (codeEmail instanceof HTMLInputElement) codeEmail.value = email;
  }, form));

onSubmit("code-sign-in-form", ({ email, code }, form) =>
  reportErrors(async () => {
    await client.auth.signInWithCode(email, code.trim());
    form.reset();
    await signedInWith("Signed in with a code");
  }, form));

onSubmit("reset-request-form", ({ email }, form) =>
  reportErrors(async () => {
    showInfo(await client.auth.requestPasswordReset({ email }));
    // The code arrives for this email, so the next form starts with it filled in.
    const resetEmail = byId("reset-form", HTMLFormElement).elements.namedItem("email");
    if (resetEmail instanceof HTMLInputElement) resetEmail.value = email;
  }, form));

onSubmit("reset-form", ({ email, code, password }, form) =>
  reportErrors(async () => {
    await client.auth.createPassword({ email, code, password });
    await signedInWith("Password changed: you are signed in");
  }, form));

onSubmit("create-form", ({ title, content, status }, form) =>
  reportErrors(async () => {
    await client.notes.create({ title, content, status: status === "PUBLISHED" ? "PUBLISHED" : "DRAFT" });
    form.reset();
    offset = 0;
    await showNotes();
    showInfo("Note created");
  }, form));

onSubmit("filter-form", ({ q, status }, form) =>
  reportErrors(async () => {
    filters = {
      q: q.trim() || undefined,
      status: status === "DRAFT" || status === "PUBLISHED" ? status : undefined,
    };
    offset = 0;
    await showNotes({ leaving: true });
  }, form));

previous.addEventListener("click", () =>
  reportErrors(async () => {
    offset = Math.max(0, offset - pageSize);
    await showNotes({ leaving: true });
  }));

next.addEventListener("click", () =>
  reportErrors(async () => {
    offset += pageSize;
    await showNotes({ leaving: true });
  }));

async function showSessions(): Promise<void> {
  const sessions = await client.auth.listSessions();
  sessionList.replaceChildren(
    ...sessions.map((session) =>
      sessionItem(session, () =>
        reportErrors(async () => {
          await client.auth.revokeSession(session.id);
          if (session.current) await client.auth.signOut();
          else await showSessions();
          showInfo("Session ended");
        }))
    ),
  );
}

onSubmit("verify-form", ({ code }, form) =>
  reportErrors(async () => {
    const email = client.session?.payload.email ?? "";
    await client.auth.verifyEmail({ email, code });
    form.reset();
    showInfo("Email verified");
  }, form));

byId("resend-verification", HTMLButtonElement).addEventListener("click", () =>
  reportErrors(async () => {
    showInfo(await client.auth.resendVerification({ email: client.session?.payload.email ?? "" }));
  }));

onSubmit("change-password-form", ({ currentPassword, newPassword }, form) =>
  reportErrors(async () => {
    // Left empty only by an account without a password, after "Confirm it's you"; the service says so otherwise.
    await client.auth.changePassword({ currentPassword: currentPassword || undefined, newPassword });
    form.reset();
    showPasswordForms(true);
    showInfo("Password changed: your other devices are signed out");
  }, form));

onSubmit("delete-account-form", ({ password }, form) =>
  reportErrors(async () => {
    await client.auth.deleteAccount({ password: password || undefined });
    form.reset();
    showInfo("Your account and its notes are deleted");
  }, form));

async function showAccounts(): Promise<void> {
  const { users } = await client.admin.listUsers({ query: adminQuery || undefined, limit: 20 });
  adminUsers.replaceChildren(
    ...users.map((user) =>
      accountItem(user, {
        setStatus: (status) =>
          reportErrors(async () => {
            await client.admin.setStatus(user.id, status);
            await showAccounts();
            showInfo(status === "SUSPENDED" ? `${user.email} is suspended` : `${user.email} is reactivated`);
          }),
        showEvents: () =>
          reportErrors(async () => {
            adminEvents.replaceChildren(...(await client.admin.events(user.id)).map(eventItem));
            adminEventsHeading.textContent = `Security events of ${user.email}`;
            adminEventsHeading.hidden = false;
          }),
      })
    ),
  );
}

onSubmit("admin-search-form", ({ query }, form) =>
  reportErrors(async () => {
    adminQuery = query;
    await showAccounts();
  }, form));

byId("show-sessions", HTMLButtonElement).addEventListener("click", () => reportErrors(showSessions));

// The second factor's state is read when the account's settings open.
account.addEventListener("toggle", () => {
  if (account.open && client.session && !client.session.mfaRequired) {
    void reportErrors(secondFactor.show);
    void reportErrors(providers.show);
    void reportErrors(passkeys.show);
  }
});

logout.addEventListener("click", () =>
  reportErrors(async () => {
    await client.auth.signOut();
    showInfo("Signed out");
  }));

logoutEverywhere.addEventListener("click", () =>
  reportErrors(async () => {
    await client.auth.signOut({ scope: "global" });
    showInfo("Signed out on every device");
  }));

showSignedIn();
// Back from a provider: the one-time code is exchanged (or the link's outcome said) before anything else.
void reportErrors(async () => {
  const returned = await providers.complete();
  if (returned.outcome === "signed_in") return await signedInWith("Signed in with your provider");
  if (visitor.shouldStart()) return await visitor.start();
  if (client.session && !client.session.mfaRequired) await showNotes();
});
