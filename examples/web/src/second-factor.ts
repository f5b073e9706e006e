/**
 * The account's second factor in the demo app: enrolling an authenticator app
 * (its otpauth URL drawn as a QR code in the page, never sent anywhere), its
 * activation with a first code, the recovery codes shown once, and removing
 * it with a code (docs/clients.md, "Second factor").
 *
 * @example
 * ```ts
 * const secondFactor = secondFactorPanel(client);
 * await secondFactor.show();
 * ```
 */
import QRCode from "qrcode";
import type { NotesClient } from "../../../shared/index.ts";
import { byId, onSubmit } from "./dom.ts";
import { reportErrors, showInfo } from "./messages.ts";

/** A code of the app is 6 digits; anything else the user types there is taken for a recovery code. */
const appCode = /^\s*\d{6}\s*$/;

export function secondFactorPanel(client: NotesClient): { show(): Promise<void>; clear(): void } {
  const state = byId("mfa-state", HTMLParagraphElement);
  const enrollForm = byId("mfa-enroll-form", HTMLFormElement);
  const activateForm = byId("mfa-activate-form", HTMLFormElement);
  const qr = byId("mfa-qr", HTMLImageElement);
  const secret = byId("mfa-secret", HTMLElement);
  const recovery = byId("mfa-recovery", HTMLElement);
  const recoveryCodes = byId("mfa-recovery-codes", HTMLOListElement);
  const unenrollForm = byId("mfa-unenroll-form", HTMLFormElement);
  /** The enrolment being activated, or the active factor. */
  let factorId: string | undefined;

  function clear(): void {
    factorId = undefined;
    state.textContent = "";
    for (const part of [enrollForm, activateForm, recovery, unenrollForm]) part.hidden = true;
    qr.removeAttribute("src");
    secret.textContent = "";
    recoveryCodes.replaceChildren();
  }

  /** Shows what the account has now: an active factor to remove, or the form to add one. */
  async function show(): Promise<void> {
    const { factors } = await client.mfa.list();
    const active = factors.find((factor) => factor.status === "active");
    // A pending enrolment is not resumed (its secret is shown only once): enrolling again replaces it. Recovery
    // codes just answered stay on screen until the user says they kept them.
    activateForm.hidden = true;
    qr.removeAttribute("src");
    secret.textContent = "";
    factorId = active?.id;
    state.textContent = active
      ? "An authenticator app is your second factor: every sign-in asks for its code."
      : "No second factor: signing in needs only your password.";
    enrollForm.hidden = Boolean(active);
    // Not right under recovery codes just shown: removing the factor waits until the user has kept them.
    unenrollForm.hidden = !active || !recovery.hidden;
  }

  onSubmit("mfa-enroll-form", ({ password }, form) =>
    reportErrors(async () => {
      const enrollment = await client.mfa.enroll({ password });
      form.reset();
      factorId = enrollment.factorId;
      qr.src = await QRCode.toDataURL(enrollment.otpauthUrl, { margin: 2, width: 200 });
      secret.textContent = enrollment.secret;
      enrollForm.hidden = true;
      activateForm.hidden = false;
      showInfo("Scan the QR code, then enter the code the app shows");
    }, form));

  onSubmit("mfa-activate-form", ({ code }, form) =>
    reportErrors(async () => {
      const activation = await client.mfa.activate({ factorId: factorId ?? "", code: code.trim() });
      form.reset();
      recoveryCodes.replaceChildren(
        ...activation.recoveryCodes.map((each) => {
          const item = document.createElement("li");
          item.textContent = each;
          return item;
        }),
      );
      recovery.hidden = false;
      await show();
      showInfo("Second factor active: your other devices are signed out");
    }, form));

  byId("mfa-recovery-done", HTMLButtonElement).addEventListener("click", () => {
    recovery.hidden = true;
    recoveryCodes.replaceChildren();
    unenrollForm.hidden = factorId === undefined;
  });

  onSubmit("mfa-unenroll-form", ({ code }, form) =>
    reportErrors(async () => {
      const id = factorId ?? "";
      await client.mfa.unenroll(
        appCode.test(code) ? { factorId: id, code: code.trim() } : { factorId: id, recoveryCode: code.trim() },
      );
      form.reset();
      await show();
      showInfo("Second factor removed: your other devices are signed out");
    }, form));

  return { show, clear };
}
