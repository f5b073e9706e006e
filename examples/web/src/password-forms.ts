/**
 * The account's forms that ask for the password, worded for whether the
 * account has one (`hasPassword` of `GET /auth/identities`): an account made
 * at a provider is never asked for a password it does not have. It sets one
 * ("Set a password", after "Confirm it's you"), and deletes itself after the
 * same proof.
 *
 * @example
 * ```ts
 * const { hasPassword } = await client.identities.list();
 * showPasswordForms(hasPassword);
 * ```
 */
import { byId } from "./dom.ts";

const changeHeading = byId("change-password-heading", HTMLHeadingElement);
const changeSubmit = byId("change-password-submit", HTMLButtonElement);
const currentPassword = byId("current-password", HTMLLabelElement);
const noPasswordHint = byId("no-password-hint", HTMLParagraphElement);
const enrollNeedsPassword = byId("mfa-enroll-needs-password", HTMLParagraphElement);
const enrollPassword = byId("mfa-enroll-password", HTMLLabelElement);
const enrollSubmit = byId("mfa-enroll-submit", HTMLButtonElement);
const deleteHint = byId("delete-no-password-hint", HTMLParagraphElement);
const deletePassword = byId("delete-password", HTMLLabelElement);

export function showPasswordForms(hasPassword: boolean): void {
  changeHeading.textContent = hasPassword ? "Change password" : "Set a password";
  changeSubmit.textContent = hasPassword ? "Change password" : "Set password";
  currentPassword.hidden = !hasPassword;
  noPasswordHint.hidden = hasPassword;
  // Enrolling an authenticator app takes the password: without one, the form says to set one first.
  enrollNeedsPassword.hidden = hasPassword;
  enrollPassword.hidden = !hasPassword;
  enrollSubmit.hidden = !hasPassword;
  deleteHint.hidden = hasPassword;
  deletePassword.hidden = !hasPassword;
}
