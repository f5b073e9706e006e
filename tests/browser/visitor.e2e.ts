/**
 * A new visitor in the demo app, in headless Chromium: it lands in the note editor on an anonymous account and writes
 * a note at once; "Keep your notes: sign up" in the header opens the sign-up, whose refusals show beside their fields;
 * signed up, the note is in the account, where a second device (a browser context of its own) signing in with the
 * same credentials finds it. And the sign-up with a code by email instead of a password.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { anonKey, readMailedCode, registerUser, uniqueEmail } from "../support/api.ts";
import { launchChromium } from "./chromium.ts";
import { serveDemoApp } from "./demo-app.ts";
import { problemBeside, submit } from "./demo-forms.ts";

let browser: Browser;
let app: Awaited<ReturnType<typeof serveDemoApp>>;

beforeAll(async () => {
  app = await serveDemoApp(inject("baseUrl"), anonKey);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
});

/** A device of its own (a fresh browser context), on the app's first page as a new visitor. */
async function newVisitor(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  await page.goto(app.url);
  await page.getByText("Writing as a visitor").waitFor();
  return page;
}

async function writeNote(page: Page, title: string): Promise<void> {
  await submit(page, "create-form", { Title: title, Content: "written before signing up" }, "Create note");
  await page.locator("#notes li", { hasText: title }).waitFor();
}

describe("a new visitor", () => {
  it("writes a note at once, signs up keeping it, and finds it in the account on a second device", async () => {
    const page = await newVisitor();
    // Straight into the note editor: no sign-in form, no sign-out.
    expect(await page.locator("#register-form").isVisible()).toBe(false);
    expect(await page.locator("#logout").isVisible()).toBe(false);
    await writeNote(page, "Visitor's first note");

    await page.getByRole("button", { name: "Keep your notes: sign up" }).click();
    const form = page.locator("#upgrade-form");
    const vic = { Name: "Vic Visitor", Email: uniqueEmail("vic"), Password: "kept from the start" };
    await submit(page, "upgrade-form", { ...vic, Password: "short" }, "Sign up");
    expect(await problemBeside(form, "Password")).toMatch(/at least 8 characters/);
    const taken = await registerUser("taken-by-visitor");
    await submit(page, "upgrade-form", { ...vic, Email: taken.email }, "Sign up");
    expect(await problemBeside(form, "Email")).toMatch(/already exists/);
    await submit(page, "upgrade-form", vic, "Sign up");
    await page.getByText(`Signed in as ${vic.Name} (${vic.Email})`).waitFor();
    expect(await page.getByRole("button", { name: "Keep your notes: sign up" }).isVisible()).toBe(false);
    await page.locator("#notes li", { hasText: "Visitor's first note" }).waitFor();

    // A second device lands as a visitor of its own, and signs in to the account.
    const laptop = await newVisitor();
    expect(await laptop.locator("#notes li", { hasText: "Visitor's first note" }).count()).toBe(0);
    await laptop.getByRole("link", { name: "Sign in" }).click();
    await submit(laptop, "login-form", { Email: vic.Email, Password: vic.Password }, "Log in");
    await laptop.getByText(`Signed in as ${vic.Name}`).waitFor();
    await laptop.locator("#notes li", { hasText: "Visitor's first note" }).waitFor();
  });

  it("signs up with a code by email instead of a password, a wrong code refused beside its field", async () => {
    const page = await newVisitor();
    await writeNote(page, "Kept by a code");
    await page.getByRole("button", { name: "Keep your notes: sign up" }).click();
    const email = uniqueEmail("wren");
    await submit(page, "upgrade-code-request-form", { Email: email }, "Email me a code");
    await page.locator("#info", { hasText: "A code has been sent" }).waitFor();
    const code = await readMailedCode(email, { kind: "sign-in" });
    const form = page.locator("#upgrade-code-form");
    const wrong = code === "00000000" ? "11111111" : "00000000";
    await submit(page, "upgrade-code-form", { Name: "Wren", "Sign-up code": wrong }, "Sign up with this code");
    expect(await problemBeside(form, "Sign-up code")).toMatch(/invalid or expired code/i);
    await submit(page, "upgrade-code-form", { Name: "Wren", "Sign-up code": code }, "Sign up with this code");
    await page.getByText(`Signed in as Wren (${email})`).waitFor();
    await page.locator("#notes li", { hasText: "Kept by a code" }).waitFor();
  });
});
