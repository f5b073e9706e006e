/**
 * The demo app's second factor in headless Chromium, as a person would use
 * it: enrol an authenticator app with the password, see its QR code (drawn in
 * the page) and secret, activate it with the app's code (made here from the
 * secret the page shows, as an app makes it), see the recovery codes once,
 * sign out and in again, be asked for the code before any note shows, sign in
 * with a recovery code, and remove the factor. Screenshots go to
 * test-results/browser/.
 */
import { mkdirSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { codeAt, totpPolicy } from "../../supabase/functions/_shared/auth/totp.ts";
import { anonKey, readMailedCode, uniqueEmail } from "../support/api.ts";
import { launchChromium } from "./chromium.ts";
import { serveDemoApp } from "./demo-app.ts";

const screenshots = "test-results/browser";
const functionsUrl = inject("baseUrl");
const period = totpPolicy.periodSeconds * 1000;

let browser: Browser;
let app: Awaited<ReturnType<typeof serveDemoApp>>;
/** Every URL the browser asked for: the QR code is made in the page, so none goes elsewhere. */
const requested: string[] = [];

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  app = await serveDemoApp(functionsUrl, anonKey);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
});

/** Waits, if needed, until at least `marginMs` remain of the current time step, so a code made now is still now's. */
async function awayFromStepEdge(marginMs = 5_000) {
  const left = period - (Date.now() % period);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${screenshots}/${name}.png`, fullPage: true });
}

/** Fills the fields of the form `formId`, by their visible labels, and submits it. */
async function submit(page: Page, formId: string, fields: Record<string, string>, button: string) {
  const form = page.locator(`#${formId}`);
  for (const [label, value] of Object.entries(fields)) await form.getByLabel(label, { exact: true }).fill(value);
  await form.getByRole("button", { name: button }).click();
}

async function infoShown(page: Page, text: string): Promise<void> {
  await page.locator("#info", { hasText: text }).waitFor();
}

async function logIn(page: Page, email: string, password: string): Promise<void> {
  await submit(page, "login-form", { Email: email, Password: password }, "Log in");
  await page.getByRole("heading", { name: "Second step", exact: true }).waitFor();
  // Nothing of the account shows before the second step: not its notes, not whose it is.
  expect(await page.locator("#signed-in").isVisible()).toBe(false);
  expect(await page.getByText("Signed in as").count()).toBe(0);
  expect(await page.getByText(email).count()).toBe(0);
  expect(await page.locator("#notes li").count()).toBe(0);
}

describe("the demo app's second factor in Chromium", () => {
  it("enrols an authenticator app, shows the recovery codes once, and asks for a code at the next sign-in", async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    page.on("request", (request) => requested.push(request.url()));
    await page.goto(app.signInUrl);
    const user = { name: "Grace Hopper", email: uniqueEmail("grace"), password: "correct horse battery" };
    await submit(page, "register-form", { Name: user.name, Email: user.email, Password: user.password }, "Register");
    await page.getByText(`Signed in as ${user.name} (${user.email})`).waitFor();
    // Enrolling needs a verified address: the code the stack mailed at registration.
    const verification = await readMailedCode(user.email, { kind: "verification" });
    await submit(page, "verify-form", { "Verification code": verification }, "Verify");
    await infoShown(page, "Email verified");
    await submit(page, "create-form", { Title: "Compiler notes", Content: "A-0" }, "Create note");
    await page.locator("#page-summary", { hasText: "of 1" }).waitFor();

    await page.getByText("Account: password, sessions, second factor, deletion").click();
    await page.getByText("No second factor: signing in needs only your password.").waitFor();
    await submit(page, "mfa-enroll-form", { Password: "not the password" }, "Set up an authenticator app");
    // The refusal shows beside the password it concerns, in sight, not at the top of the long page; typing takes it away.
    const enrollForm = page.locator("#mfa-enroll-form");
    const password = enrollForm.getByLabel("Password", { exact: true });
    await expect.poll(() => password.getAttribute("aria-invalid"), { timeout: 10_000 }).toBe("true");
    const problem = page.locator(`#${await password.getAttribute("aria-describedby")}`);
    expect(await problem.textContent()).toBe("Password is incorrect");
    const [input, shown] = [await password.boundingBox(), await problem.boundingBox()];
    expect(shown?.y ?? 0).toBeGreaterThanOrEqual((input?.y ?? 0) + (input?.height ?? 0) - 1);
    expect(shown?.y ?? 0).toBeLessThan((input?.y ?? 0) + (input?.height ?? 0) + 24);
    expect(await page.locator("#error").isVisible()).toBe(false);
    await password.pressSequentially("x");
    await expect.poll(() => problem.count()).toBe(0);
    expect(await password.getAttribute("aria-invalid")).toBeNull();
    await submit(page, "mfa-enroll-form", { Password: user.password }, "Set up an authenticator app");
    const qr = page.getByRole("img", { name: "QR code of the authenticator secret" });
    await qr.waitFor();
    expect(await qr.getAttribute("src")).toMatch(/^data:image\/png;base64,/);
    const secret = (await page.locator("#mfa-secret").textContent()) ?? "";
    expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
    await shoot(page, "mfa-01-enrol");

    await awayFromStepEdge();
    const activatedAt = Date.now();
    await submit(page, "mfa-activate-form", { "Code from the app": codeAt(secret, activatedAt) }, "Activate");
    await infoShown(page, "Second factor active");
    const codes = page.locator("#mfa-recovery-codes li");
    await expect.poll(() => codes.count()).toBe(10);
    const recoveryCodes = await codes.allTextContents();
    await page.getByText("An authenticator app is your second factor").waitFor();
    // Removing the factor is not offered right under the codes just shown, only once they are kept.
    expect(await page.getByRole("button", { name: "Remove the second factor" }).isVisible()).toBe(false);
    await shoot(page, "mfa-02-recovery-codes");
    await page.getByRole("button", { name: "I have kept them" }).click();
    await expect.poll(() => codes.count()).toBe(0);
    expect(await page.locator("#mfa-recovery").isVisible()).toBe(false);
    await page.getByRole("button", { name: "Remove the second factor" }).waitFor();

    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await page.getByRole("heading", { name: "Log in" }).waitFor();
    await logIn(page, user.email, user.password);
    await shoot(page, "mfa-03-second-step");
    // A wrong code is refused beside its input; the code of the next time step, not yet used, is accepted.
    const used = [-1, 0, 1].map((steps) => codeAt(secret, Date.now() + steps * period));
    const wrong = ["000000", "111111", "222222", "333333"].find((code) => !used.includes(code)) ?? "";
    await submit(page, "mfa-verify-form", { "Authentication code": wrong }, "Verify");
    await page.locator("#mfa-verify-form .field-problem", { hasText: "Invalid or expired code" }).waitFor();
    await submit(
      page,
      "mfa-verify-form",
      { "Authentication code": codeAt(secret, activatedAt + period) },
      "Verify",
    );
    await infoShown(page, "Logged in");
    await page.locator("#notes li", { hasText: "Compiler notes" }).waitFor();
    await shoot(page, "mfa-04-signed-in");

    // Without the app: a recovery code, once.
    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await logIn(page, user.email, user.password);
    await page.getByRole("button", { name: "Use a recovery code" }).click();
    await submit(page, "mfa-recover-form", { "Recovery code": recoveryCodes[0] }, "Use this recovery code");
    await infoShown(page, "Logged in with a recovery code: 9 left");
    await page.locator("#notes li", { hasText: "Compiler notes" }).waitFor();

    // Removing the factor takes a code of the app or a recovery code; the next sign-in asks for the password only.
    await page.getByText("Account: password, sessions, second factor, deletion").click();
    await page.getByText("An authenticator app is your second factor").waitFor();
    await submit(
      page,
      "mfa-unenroll-form",
      { "Code from the app, or a recovery code": recoveryCodes[1] },
      "Remove the second factor",
    );
    await infoShown(page, "Second factor removed");
    await page.getByText("No second factor: signing in needs only your password.").waitFor();
    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await submit(page, "login-form", { Email: user.email, Password: user.password }, "Log in");
    await infoShown(page, "Logged in");
    await page.locator("#notes li", { hasText: "Compiler notes" }).waitFor();

    const origins = new Set(requested.map((url) => new URL(url).origin));
    expect([...origins].sort()).toEqual([new URL(app.url).origin, new URL(functionsUrl).origin].sort());
    await context.close();
  });
});
