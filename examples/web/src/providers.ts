/**
 * Sign-in with OpenID Connect providers in the demo app: a "Sign in with
 * <provider>" button per provider on the sign-in screen, finishing the
 * sign-in (or a link, or a proof) when the browser comes back, and the
 * account's linked providers in its settings, each with an unlink button, a
 * "Link <provider>" button for each one not linked yet, and "Confirm it's
 * you": the password, or for an account without one a new sign-in at one of
 * its providers, which changing how the account signs in needs first.
 *
 * Which providers to offer: `VITE_NOTES_PROVIDERS`, a comma-separated list
 * that stack-plugin.ts takes from NOTES_PROVIDERS, else from OIDC_PROVIDERS
 * (the service's own setting, which a stack the demo starts reads from the
 * same environment), keeping only those the stack has. With none, the
 * sign-in page says how to start a stack with one (`VITE_NOTES_PROVIDER_HINT`).
 * The browser comes back to this page (its origin and path), which the
 * service must list in OAUTH_REDIRECT_URLS.
 *
 * @example
 * ```ts
 * const providers = providersPanel(client);
 * const outcome = await providers.complete();
 * ```
 */
import type { NotesClient, ProviderSignInResult } from "../../../shared/index.ts";
import { byId } from "./dom.ts";
import { reportErrors, showInfo } from "./messages.ts";
import { showPasswordForms } from "./password-forms.ts";

/** The providers this demo offers, as configured (`VITE_NOTES_PROVIDERS`). */
export const configuredProviders: readonly string[] = (import.meta.env.VITE_NOTES_PROVIDERS ?? "")
  .split(",")
  .map((name) => name.trim())
  .filter((name) => name !== "");

/** What the page says for each reason a provider's return signed nothing in (the service's `error=`). */
const returnErrors: Record<string, string> = {
  access_denied: "The sign-in was cancelled at the provider.",
  identity_not_linked: "An account with this email address already exists: log in with its password, then link " +
    "the provider under Account.",
  identity_already_linked: "That provider account is already linked to another account.",
  email_required: "The provider did not share an email address, which an account needs.",
  account_suspended: "This account is suspended.",
  link_expired: "You were signed out before the link completed: sign in and link again.",
  flow_expired: "The sign-in took more than 10 minutes: start it again.",
  provider_error: "The provider's answer could not be used: try again.",
  server_error: "The sign-in could not be completed: try again.",
  not_started_here: "This sign-in was not started on this page, so it was not used: start it here.",
};

/** A provider's name as a person reads it: `google` → `Google`. */
function label(provider: string): string {
  return provider.charAt(0).toUpperCase() + provider.slice(1).replaceAll("_", " ");
}

/** This page, where the provider's round trip comes back, with no query: exactly as OAUTH_REDIRECT_URLS lists it. */
function thisPage(): string {
  return `${location.origin}${location.pathname}`;
}

function button(text: string, onClick?: () => void): HTMLButtonElement {
  const element = document.createElement("button");
  element.type = "button";
  element.textContent = text;
  if (onClick) element.addEventListener("click", onClick);
  return element;
}

export function providersPanel(client: NotesClient): {
  /** Finishes a provider's return found in the page's URL; answers what it was. */
  complete(): Promise<ProviderSignInResult>;
  /** Shows the account's linked providers and the ones it can link. */
  show(): Promise<void>;
  clear(): void;
} {
  const signInSection = byId("provider-sign-in", HTMLElement);
  const signInButtons = byId("provider-buttons", HTMLElement);
  const settings = byId("identities", HTMLElement);
  const linked = byId("identity-list", HTMLUListElement);
  const state = byId("identities-state", HTMLParagraphElement);
  const linkForm = byId("link-identity-form", HTMLFormElement);
  const linkButtons = byId("link-buttons", HTMLElement);
  const proofForm = byId("reauthenticate-form", HTMLFormElement);
  const proofPassword = byId("reauthenticate-password", HTMLLabelElement);
  const proofButtons = byId("reauthenticate-buttons", HTMLElement);

  const hint = byId("provider-hint", HTMLParagraphElement);
  hint.textContent = import.meta.env.VITE_NOTES_PROVIDER_HINT;
  hint.hidden = configuredProviders.length > 0 || !hint.textContent;
  signInSection.hidden = configuredProviders.length === 0;
  settings.hidden = configuredProviders.length === 0;
  signInButtons.replaceChildren(
    ...configuredProviders.map((provider) =>
      button(
        `Sign in with ${label(provider)}`,
        () => void reportErrors(() => client.identities.signIn({ provider, redirectTo: thisPage() })),
      )
    ),
  );

  function clear(): void {
    linked.replaceChildren();
    linkButtons.replaceChildren();
    proofButtons.replaceChildren();
    state.textContent = "";
    linkForm.hidden = true;
    proofForm.hidden = true;
  }

  /** "Confirm it's you": the password when the account has one, else a new sign-in at each linked provider. */
  function showProofs(providers: readonly string[], hasPassword: boolean): void {
    proofForm.hidden = providers.length === 0;
    proofPassword.hidden = !hasPassword;
    if (hasPassword) {
      const submit = button("Confirm with my password");
      submit.type = "submit";
      proofButtons.replaceChildren(submit);
      return;
    }
    proofButtons.replaceChildren(
      ...providers.map((provider) =>
        button(`Confirm with ${label(provider)}`, () =>
          void reportErrors(async () => {
            // The page leaves for the provider, which asks to sign in again, and comes back with `reauthenticated=`.
            await client.identities.reauthenticate({ provider, redirectTo: thisPage() }, { navigate: true });
          }))
      ),
    );
  }

  async function show(): Promise<void> {
    const { identities, hasPassword } = await client.identities.list();
    showPasswordForms(hasPassword);
    if (configuredProviders.length === 0) return;
    state.textContent = identities.length === 0
      ? "No provider is linked: you sign in with your password."
      : hasPassword
      ? "You can sign in with your password or with:"
      : "You have no password, and sign in with:";
    linked.replaceChildren(
      ...identities.map((identity) => {
        const item = document.createElement("li");
        const text = document.createElement("span");
        text.textContent = `${label(identity.provider)}${identity.email ? ` (${identity.email})` : ""}`;
        item.append(
          text,
          button("Unlink", () =>
            void reportErrors(async () => {
              await client.identities.unlink(identity.id);
              await show();
              showInfo(`${label(identity.provider)} unlinked`);
            })),
        );
        return item;
      }),
    );
    showProofs([...new Set(identities.map((identity) => identity.provider))], hasPassword);
    const linkable = configuredProviders.filter((provider) => !identities.some((each) => each.provider === provider));
    linkForm.hidden = linkable.length === 0;
    // One submit button per provider: the one pressed says which to link.
    linkButtons.replaceChildren(
      ...linkable.map((provider) => {
        const submit = button(`Link ${label(provider)}`);
        submit.type = "submit";
        submit.value = provider;
        return submit;
      }),
    );
  }

  linkForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const provider = event.submitter instanceof HTMLButtonElement ? event.submitter.value : "";
    const password = String(new FormData(linkForm).get("password") ?? "");
    // The page leaves for the provider, and comes back here with `linked=` or `error=` (see complete).
    void reportErrors(async () => {
      await client.identities.link(
        { provider, redirectTo: thisPage(), password: password || undefined },
        { navigate: true },
      );
    }, linkForm);
  });

  proofForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const password = String(new FormData(proofForm).get("password") ?? "");
    void reportErrors(async () => {
      await client.auth.reauthenticate({ password });
      proofForm.reset();
      showInfo("Confirmed: for 5 minutes you can change how you sign in");
    }, proofForm);
  });

  async function complete(): Promise<ProviderSignInResult> {
    const result = await client.identities.completeSignIn();
    if (result.outcome === "error") {
      throw new Error(returnErrors[result.error] ?? result.description ?? `The sign-in failed (${result.error})`);
    }
    if (result.outcome === "linked") showInfo(`${label(result.provider)} is linked: it signs in to this account`);
    if (result.outcome === "reauthenticated") {
      showInfo(`Confirmed with ${label(result.provider)}: for 5 minutes you can change how you sign in`);
    }
    return result;
  }

  return { complete, show, clear };
}
