/**
 * Passkeys in the demo app: "Sign in with a passkey", the same passkeys offered in the email field's autofill
 * (conditional UI) while the sign-in page shows, a passkey as the second step, and the account's passkeys: add one
 * (after confirming it's you with the password or another passkey), rename, remove. Browsers run passkeys only on
 * a host name: open the demo at http://localhost:5173, not 127.0.0.1.
 *
 * @example
 * ```ts
 * const passkeys = passkeysPanel(client, signedInWith);
 * passkeys.offerAutofill();
 * // Signed in another way: the autofill's request ends.
 * passkeys.stopAutofill();
 * ```
 */
import { WebAuthnAbortService } from "@simplewebauthn/browser";
import type { NotesClient, PasskeyInfo } from "../../../shared/index.ts";
import { byId, onSubmit } from "./dom.ts";
import { reportErrors, showInfo } from "./messages.ts";

/** Whether the error is a ceremony the browser or the user cancelled (another one started, the dialog closed). */
function cancelled(error: unknown): boolean {
  return error instanceof Error && (error.name === "AbortError" || error.name === "NotAllowedError");
}

/** Browsers run no passkey ceremony on an IP address (127.0.0.1): only on a host name such as localhost. */
function onIpAddress(): boolean {
  return /^[\d.]+$|^\[/.test(location.hostname);
}

/** Refuses up front where the browser would, saying what to do instead. */
function requireHostName(): void {
  if (onIpAddress()) {
    throw new Error(
      `Passkeys work only on a host name: open this page at ${location.href.replace(location.hostname, "localhost")}`,
    );
  }
}

export function passkeysPanel(
  client: NotesClient,
  signedInWith: (message: string) => Promise<void>,
): { show(): Promise<void>; clear(): void; offerAutofill(): void; stopAutofill(): void } {
  const state = byId("passkeys-state", HTMLParagraphElement);
  const list = byId("passkey-list", HTMLUListElement);
  const confirmForm = byId("passkey-confirm-form", HTMLFormElement);

  function clear(): void {
    state.textContent = "";
    list.replaceChildren();
  }

  /** Whether the autofill's ceremony is waiting for a pick. */
  let offering = false;

  /** Offers the passkeys in the email field's autofill, where the browser can, once at a time; settles on a pick. */
  function offerAutofill(): void {
    if (offering || onIpAddress()) return;
    offering = true;
    void (async () => {
      try {
        if (!(await globalThis.PublicKeyCredential?.isConditionalMediationAvailable?.())) return;
        await client.passkeys.signIn({ autofill: true });
        await signedInWith("Signed in with a passkey");
      } catch (error) {
        // Another ceremony took over (the button below), or the browser gave up: nothing to say.
        if (!cancelled(error)) await reportErrors(() => Promise.reject(error));
      } finally {
        offering = false;
      }
    })();
  }

  /**
   * Ends the autofill's pending request once signed in another way (a password, a provider, a new account): the
   * browser would otherwise keep offering passkeys for a page that no longer shows the sign-in form.
   */
  function stopAutofill(): void {
    if (offering) WebAuthnAbortService.cancelCeremony();
  }

  function item(passkey: PasskeyInfo): HTMLLIElement {
    const entry = document.createElement("li");
    const label = document.createElement("span");
    const used = passkey.lastUsedAt ? `last used ${new Date(passkey.lastUsedAt).toLocaleString()}` : "never used";
    label.textContent = `${passkey.name} (${passkey.authenticator ?? "authenticator unknown"}, ${
      passkey.synced ? "synced" : "this device only"
    }, ${used})`;
    const rename = document.createElement("button");
    rename.type = "button";
    rename.textContent = `Rename ${passkey.name}`;
    rename.addEventListener("click", () => {
      const name = globalThis.prompt("New name of the passkey", passkey.name);
      if (name) {
        void reportErrors(async () => {
          await client.passkeys.rename(passkey.id, name);
          await show();
          showInfo("Passkey renamed");
        });
      }
    });
    const remove = document.createElement("button");
    remove.type = "button";
    remove.textContent = `Remove ${passkey.name}`;
    remove.addEventListener("click", () =>
      reportErrors(async () => {
        await client.passkeys.remove(passkey.id);
        await show();
        showInfo("Passkey removed");
      }));
    entry.append(label, " ", rename, " ", remove);
    return entry;
  }

  async function show(): Promise<void> {
    const passkeys = await client.passkeys.list();
    state.textContent = passkeys.length === 0
      ? "No passkey yet: add one to sign in with a fingerprint, a face or this device's PIN."
      : `${passkeys.length} passkey${passkeys.length === 1 ? "" : "s"}: each signs in with no password.`;
    list.replaceChildren(...passkeys.map(item));
  }

  byId("passkey-sign-in", HTMLButtonElement).addEventListener("click", () =>
    reportErrors(async () => {
      requireHostName();
      await client.passkeys.signIn();
      await signedInWith("Signed in with a passkey");
    }));

  byId("mfa-passkey", HTMLButtonElement).addEventListener("click", () =>
    reportErrors(async () => {
      requireHostName();
      await client.passkeys.signIn();
      await signedInWith("Logged in");
    }));

  onSubmit("passkey-confirm-form", ({ password }, form) =>
    reportErrors(async () => {
      await client.auth.reauthenticate({ password });
      form.reset();
      showInfo("Confirmed: you can add or remove passkeys for 5 minutes");
    }, form));

  byId("passkey-confirm-with-passkey", HTMLButtonElement).addEventListener("click", () =>
    reportErrors(async () => {
      requireHostName();
      await client.passkeys.reauthenticate();
      showInfo("Confirmed: you can add or remove passkeys for 5 minutes");
    }, confirmForm));

  onSubmit("passkey-add-form", ({ name }, form) =>
    reportErrors(async () => {
      requireHostName();
      const trimmed = name.trim();
      const added = await client.passkeys.register(trimmed ? { name: trimmed } : {});
      form.reset();
      await show();
      showInfo(`Passkey "${added.name}" added: sign in with it next time`);
    }, form));

  return { show, clear, offerAutofill, stopAutofill };
}
