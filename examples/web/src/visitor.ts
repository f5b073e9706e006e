/**
 * A visitor's way in: a new visitor lands in the note editor on an anonymous
 * account (no email, no password) and writes at once; "Keep your notes: sign
 * up" in the header opens the sign-up, with a password or with a code by
 * email, which keeps the account's id and so every note. "Sign in" (the page
 * at `#sign-in`) shows the sign-in forms instead, for a visitor who has an
 * account already; a link to `#sign-in` lands there without starting one.
 *
 * @example
 * ```ts
 * const visitor = visitorPanel(client, signedInWith);
 * if (visitor.shouldStart()) await visitor.start();
 * ```
 */
import type { NotesClient } from "../../../shared/index.ts";
import { byId, onSubmit } from "./dom.ts";
import { reportErrors, showInfo } from "./messages.ts";

const keepNotes = byId("keep-notes", HTMLButtonElement);
const goSignIn = byId("go-sign-in", HTMLAnchorElement);
const backToNotes = byId("back-to-notes", HTMLAnchorElement);
const upgrade = byId("upgrade", HTMLElement);
const codeForm = byId("upgrade-code-form", HTMLFormElement);

/** Whether the page shows the sign-in forms (`#sign-in`) rather than the notes. */
export function signingIn(): boolean {
  return location.hash === "#sign-in";
}

export function visitorPanel(client: NotesClient, signedInWith: (message: string) => Promise<void>) {
  const isVisitor = () => client.session?.payload.isAnonymous === true;

  /** After a sign-up: the account's page, the note editor where it was. */
  async function signedUp(name: string): Promise<void> {
    upgrade.hidden = true;
    await signedInWith(`Welcome, ${name}: your notes are kept in your account`);
  }

  keepNotes.addEventListener("click", () => {
    upgrade.hidden = false;
    upgrade.querySelector("input")?.focus();
  });

  onSubmit("upgrade-form", ({ name, email, password }, form) =>
    reportErrors(async () => {
      const { payload } = await client.auth.upgradeAnonymous({ name, email, password });
      form.reset();
      await signedUp(payload.name);
    }, form));

  onSubmit("upgrade-code-request-form", ({ email }, form) =>
    reportErrors(async () => {
      showInfo(await client.auth.sendUpgradeCode(email));
      // The code arrives for this email, so the next form starts with it filled in.
      const codeEmail = codeForm.elements.namedItem("email");
      if (codeEmail instanceof HTMLInputElement) codeEmail.value = email;
      codeForm.querySelector("input")?.focus();
    }, form));

  onSubmit("upgrade-code-form", ({ name, email, code }, form) =>
    reportErrors(async () => {
      const { payload } = await client.auth.upgradeAnonymousWithCode({ name, email, code: code.trim() });
      form.reset();
      await signedUp(payload.name);
    }, form));

  return {
    /** Shows the header's links and the sign-up for the session the client holds now. */
    show(): void {
      const visitor = isVisitor();
      keepNotes.hidden = !visitor || signingIn();
      goSignIn.hidden = !visitor || signingIn();
      backToNotes.hidden = !visitor || !signingIn();
      if (!visitor) upgrade.hidden = true;
    },
    /** A new visitor (no session, not asking to sign in) gets an anonymous account to write in at once. */
    shouldStart: () => client.session === undefined && !signingIn(),
    async start(): Promise<void> {
      await client.auth.signInAnonymously();
      await signedInWith("Write away: sign up whenever you want to keep your notes");
    },
  };
}
