/**
 * The demo app's "Sign in with <provider>" button in headless Chromium, with a
 * real OpenID Connect provider (`oidc-provider`, dev/harness/identity-provider.ts)
 * whose own sign-in and consent pages the browser goes through: the page
 * leaves for the service, the provider, the service's callback, and comes back
 * to the demo, which exchanges the one-time code and shows the account, with
 * the code gone from the address bar. Then the account's settings list the
 * provider, which must confirm it is them at the provider again before it may unlink, and whose only identity
 * cannot be unlinked. Screenshots go to
 * test-results/browser/.
 */
import { mkdirSync } from "node:fs";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anonKey, uniqueEmail } from "../support/api.ts";
import { type IdentityProvider, identityProviderForStack } from "../../dev/harness/identity-provider.ts";
import { type ScratchStack, startScratchStack } from "../support/scratch-stack.ts";
import { launchChromium } from "./chromium.ts";
import { freePort, serveDemoApp } from "./demo-app.ts";

const screenshots = "test-results/browser";

let browser: Browser;
let provider: IdentityProvider;
let stack: ScratchStack;
let app: Awaited<ReturnType<typeof serveDemoApp>>;

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  // The service knows the demo's URL before the demo starts.
  const appPort = await freePort();
  let env: Record<string, string>;
  ({ provider, env } = await identityProviderForStack([`http://127.0.0.1:${appPort}/`]));
  stack = await startScratchStack("browser_provider", { env: { ...env, BCRYPT_COST: "4" } });
  app = await serveDemoApp(stack.baseUrl, anonKey, { port: appPort, providers: "local" });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await stack?.stop();
  await provider?.stop();
});

describe("the demo app's sign-in with a provider in Chromium", () => {
  it("signs in through the provider's pages, back on the demo with the account shown and the code gone from the URL", async () => {
    const sub = `person-${crypto.randomUUID()}`;
    const email = uniqueEmail("browser-provider");
    provider.setAccount({ sub, email, email_verified: true, name: "Hedy Lamarr" });
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    await page.goto(app.signInUrl);

    await page.getByRole("button", { name: "Sign in with Local" }).click();
    // The provider's own development pages: any login (the account's subject) and password, then consent.
    await page.waitForURL((url) => url.origin === provider.issuer);
    await page.locator('input[name="login"]').fill(sub);
    await page.locator('input[name="password"]').fill("any password");
    await page.getByRole("button", { name: "Sign-in" }).click();
    await page.getByRole("button", { name: "Continue" }).click();

    await page.getByText(`Signed in as Hedy Lamarr (${email})`).waitFor();
    await page.locator("#info", { hasText: "Signed in with your provider" }).waitFor();
    expect(page.url()).toBe(app.url);
    await page.screenshot({ path: `${screenshots}/provider-signed-in.png`, fullPage: true });

    await page.getByText("Account: password, sessions, second factor, deletion").click();
    const identities = page.locator("#identities");
    await identities.getByText(`Local (${email})`).waitFor();
    // The account has no password: nothing asks for one, or points at a reset form this page does not show.
    await page.getByRole("heading", { name: "Set a password" }).waitFor();
    for (const form of ["#change-password-form", "#delete-account-form", "#mfa-enroll-form"]) {
      const asked = page.locator(form).getByLabel(/^(Current )?[Pp]assword$/);
      expect(await asked.isVisible(), form).toBe(false);
    }
    expect(await page.getByText(/reset code above/).count()).toBe(0);
    expect(await identities.getByText("You have no password, and sign in with:").isVisible()).toBe(true);
    // Unlinking needs a proof given for it first: for an account without a password, a new sign-in at its provider,
    // which asks for the login again though the browser is signed in there.
    await identities.getByRole("button", { name: "Unlink" }).click();
    await page.locator("#error", { hasText: "Confirm it is you first" }).waitFor();
    await identities.getByRole("button", { name: "Confirm with Local" }).click();
    await page.waitForURL((url) => url.origin === provider.issuer);
    await page.locator('input[name="login"]').fill(sub);
    await page.locator('input[name="password"]').fill("any password");
    await page.getByRole("button", { name: "Sign-in" }).click();
    const consent = page.getByRole("button", { name: "Continue" });
    await Promise.race([consent.click(), page.waitForURL((url) => url.origin === new URL(app.url).origin)]);
    await page.locator("#info", { hasText: "Confirmed with Local" }).waitFor();
    expect(page.url()).toBe(app.url);
    await page.getByText("Account: password, sessions, second factor, deletion").click();
    await identities.getByRole("button", { name: "Unlink" }).click();
    await page.locator("#error", { hasText: "only way to sign in" }).waitFor();
    await context.close();
  });
});
