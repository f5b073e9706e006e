/**
 * The demo app's admin page in headless Chromium: hidden from a standard
 * user, shown to an admin (granted with the operator's command), which finds
 * an account, sees its note count but none of its notes, suspends it, reads
 * its security events and reactivates it. Runs on a stack of its own, whose
 * database the command changes. Screenshots go to test-results/browser/.
 */
import { mkdirSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anonKey } from "../support/api.ts";
import { expectAuthError } from "../support/auth.ts";
import { signUp, signUpAdmin, testPassword } from "../support/admin.ts";
import { type ScratchStack, startScratchStack } from "../support/scratch-stack.ts";
import { launchChromium } from "./chromium.ts";
import { serveDemoApp } from "./demo-app.ts";

const screenshots = "test-results/browser";

let stack: ScratchStack;
let browser: Browser;
let app: Awaited<ReturnType<typeof serveDemoApp>>;

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  stack = await startScratchStack("admin_browser", { env: { BCRYPT_COST: "4" } });
  app = await serveDemoApp(stack.baseUrl, anonKey);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await stack?.stop();
});

async function logIn(email: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  await page.goto(app.signInUrl);
  const form = page.locator("#login-form");
  await form.getByLabel("Email", { exact: true }).fill(email);
  await form.getByLabel("Password", { exact: true }).fill(testPassword);
  await form.getByRole("button", { name: "Log in" }).click();
  await page.locator("#info", { hasText: "Logged in" }).waitFor();
  return page;
}

describe("the demo app's admin page in Chromium", () => {
  it("is hidden from a standard user, and lets an admin find, suspend and reactivate an account", async () => {
    const member = await signUp(stack, "member");
    const secret = `diary ${crypto.randomUUID()}`;
    const created = await stack.call("/notes-create", { token: member.accessToken, body: { title: secret } });
    expect(created.status, created.text).toBe(201);
    const admin = await signUpAdmin(stack, "operator");

    const memberPage = await logIn(member.email);
    expect(await memberPage.locator("#admin").isVisible()).toBe(false);
    await memberPage.context().close();

    const page = await logIn(admin.email);
    await page.getByRole("heading", { name: "Accounts (admin)" }).waitFor();
    const search = page.locator("#admin-search-form");
    await search.getByLabel("Email or name").fill(member.email);
    await search.getByRole("button", { name: "Find accounts" }).click();
    const row = page.locator("#admin-users li", { hasText: member.email });
    await row.getByText("ACTIVE · 1 notes").waitFor();
    expect(await page.content()).not.toContain(secret);

    await row.getByRole("button", { name: "Suspend" }).click();
    await page.locator("#info", { hasText: `${member.email} is suspended` }).waitFor();
    await row.getByText("SUSPENDED").waitFor();
    expectAuthError(await stack.call("/auth/login", { body: { email: member.email, password: testPassword } }), 403);

    await row.getByRole("button", { name: "Show events" }).click();
    await page.getByRole("heading", { name: `Security events of ${member.email}` }).waitFor();
    await page.locator("#admin-events li", { hasText: "account_suspended" }).waitFor();
    await page.screenshot({ path: `${screenshots}/admin-01-account-suspended.png`, fullPage: true });

    await row.getByRole("button", { name: "Reactivate" }).click();
    await page.locator("#info", { hasText: `${member.email} is reactivated` }).waitFor();
    const login = await stack.call("/auth/login", { body: { email: member.email, password: testPassword } });
    expect(login.status, login.text).toBe(200);
  });
});
