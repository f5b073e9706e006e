/**
 * The demo app in headless Chromium, as a person would use it: register, log
 * in, sign in with a code by email, reset the password with the mailed code (the page says where a local
 * stack prints it), create, page through, edit, publish and unpublish, search,
 * filter and delete notes, see the API's own error messages (a 400's beside
 * the inputs they concern), follow notes live from another tab, resolve a note saved in two tabs, the account's
 * settings behind one disclosure, and a second user who sees none of the first
 * user's notes. Screenshots go to test-results/browser/ (git-ignored).
 */
import { mkdirSync } from "node:fs";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { anonKey, call, readMailedCode, readResetCode, registerUser, uniqueEmail } from "../support/api.ts";
import { createNote } from "../support/notes.ts";
import { openApiDocument } from "../support/openapi.ts";
import { launchChromium } from "./chromium.ts";
import { serveDemoApp } from "./demo-app.ts";
import { formProblem, problemBeside, submit } from "./demo-forms.ts";

const screenshots = "test-results/browser";
const functionsUrl = inject("baseUrl");
const apiOrigin = new URL(functionsUrl).origin;

let browser: Browser;
let app: Awaited<ReturnType<typeof serveDemoApp>>;
/** Every URL the browser asked for, to show that nothing left this machine. */
const requested: string[] = [];
/** Every answer of the app's own server that was not found. */
const notFound: string[] = [];

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  app = await serveDemoApp(functionsUrl, anonKey);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
});

async function newUserPage(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  page.on("request", (request) => requested.push(request.url()));
  page.on("response", (response) => {
    if (response.status() === 404 && response.url().startsWith(app.url)) notFound.push(response.url());
  });
  await page.goto(app.signInUrl);
  return { context, page };
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${screenshots}/${name}.png`, fullPage: true });
}

/** Whether the input labelled `label` in `form` is marked invalid now. */
async function markedInvalid(form: Locator, label: string): Promise<boolean> {
  return (await form.getByLabel(label, { exact: true }).getAttribute("aria-invalid")) === "true";
}

/** Waits for the info line to read `text`. */
async function infoShown(page: Page, text: string): Promise<void> {
  await page.locator("#info", { hasText: text }).waitFor();
}

async function summary(page: Page, text: string): Promise<void> {
  await page.locator("#page-summary", { hasText: text }).waitFor();
}

/** Opens the account's settings (password, sessions, deletion), which the page keeps folded away. */
async function openAccount(page: Page): Promise<void> {
  const account = page.locator("#account");
  // A <details> has the attribute `open` while it shows its content.
  if ((await account.getAttribute("open")) === null) {
    await account.getByText("Account: password, sessions, second factor, deletion").click();
  }
  await page.locator("#change-password-form").waitFor();
}

function note(page: Page, title: string) {
  return page.locator("#notes li", { has: page.getByRole("heading", { name: title }) });
}

async function titlesShown(page: Page): Promise<string[]> {
  return (await page.locator("#notes li h3").allTextContents()).map((text) => text.replace(/ (DRAFT|PUBLISHED)$/, ""));
}

describe("the demo app in Chromium", () => {
  const ada = { name: "Ada Lovelace", email: uniqueEmail("ada"), password: "correct horse battery" };
  const newPassword = "analytical engine 1843";

  it("takes a user through accounts and notes, showing the API's own errors", async () => {
    const { page } = await newUserPage();
    await page.getByRole("heading", { name: "Register" }).waitFor();
    await shoot(page, "01-signed-out");

    await submit(page, "register-form", { Name: ada.name, Email: ada.email, Password: "short" }, "Register");
    expect(await problemBeside(page.locator("#register-form"), "Password")).toBe(
      "password must be at least 8 characters",
    );
    await shoot(page, "02-api-error-on-register");

    await submit(page, "register-form", { Name: ada.name, Email: ada.email, Password: ada.password }, "Register");
    await page.getByText(`Signed in as ${ada.name} (${ada.email})`).waitFor();
    await summary(page, "No notes yet");
    expect(await page.getByRole("heading", { name: "Register" }).isVisible()).toBe(false);
    // The account's settings wait folded away under one line.
    expect(await page.locator("#change-password-form").isVisible()).toBe(false);
    await page.getByText("Account: password, sessions, second factor, deletion").waitFor();

    await submit(page, "create-form", { Title: "", Content: "" }, "Create note");
    expect(await formProblem(page, "create-form")).toBe("At least one of title or content is required");

    for (let n = 1; n <= 6; n++) {
      await submit(page, "create-form", { Title: `Note ${n}`, Content: `Content of note ${n}` }, "Create note");
      await summary(page, `of ${n}`);
    }
    await summary(page, "Notes 1–5 of 6");
    expect(await titlesShown(page)).toEqual(["Note 6", "Note 5", "Note 4", "Note 3", "Note 2"]);
    await page.getByRole("button", { name: "Next page" }).click();
    await summary(page, "Notes 6–6 of 6");
    expect(await titlesShown(page)).toEqual(["Note 1"]);
    expect(await page.getByRole("button", { name: "Next page" }).isDisabled()).toBe(true);
    await page.getByRole("button", { name: "Previous page" }).click();
    await summary(page, "Notes 1–5 of 6");

    await page.getByRole("button", { name: "Edit Note 6" }).click();
    const editor = page.locator("#notes form.edit-form");
    // Save and Cancel stand apart, not touching.
    const [save, cancel] = [
      await editor.getByRole("button", { name: "Save" }).boundingBox(),
      await editor.getByRole("button", { name: "Cancel" }).boundingBox(),
    ];
    expect((cancel?.x ?? 0) - ((save?.x ?? 0) + (save?.width ?? 0))).toBeGreaterThanOrEqual(6);
    await editor.getByLabel("Title").fill("Note 6, edited");
    await editor.getByLabel("Content").fill("New words");
    await editor.getByRole("button", { name: "Save" }).click();
    await infoShown(page, "Note saved");
    await note(page, "Note 6, edited").getByText("New words").waitFor();

    await page.getByRole("button", { name: "Publish Note 5", exact: true }).click();
    await note(page, "Note 5").locator(".status", { hasText: "PUBLISHED" }).waitFor();
    expect(await note(page, "Note 5").getByRole("button", { name: "Publish Note 5", exact: true }).count()).toBe(0);
    // A published note goes back to draft, and can be published again.
    await page.getByRole("button", { name: "Unpublish Note 5" }).click();
    await note(page, "Note 5").locator(".status", { hasText: "DRAFT" }).waitFor();
    await page.getByRole("button", { name: "Publish Note 5", exact: true }).click();
    await note(page, "Note 5").locator(".status", { hasText: "PUBLISHED" }).waitFor();

    await page.getByRole("button", { name: "Delete Note 4" }).click();
    await summary(page, "Notes 1–5 of 5");
    expect(await titlesShown(page)).toEqual(["Note 6, edited", "Note 5", "Note 3", "Note 2", "Note 1"]);
    await shoot(page, "03-notes-edited-published-deleted");

    // Search and the status filter, alone and together; clearing both shows every note again.
    const filter = async (search: string, show: string) => {
      const form = page.locator("#filter-form");
      await form.getByLabel("Search").fill(search);
      await form.getByLabel("Show").selectOption({ label: show });
      await form.getByRole("button", { name: "Apply" }).click();
    };
    // Two filters can show the same summary, so the titles are awaited too.
    const shown = (titles: string[]) => expect.poll(() => titlesShown(page)).toEqual(titles);
    await filter("new words", "All notes");
    await summary(page, "Notes 1–1 of 1 matching");
    await shown(["Note 6, edited"]);
    await filter("", "Published");
    await shown(["Note 5"]);
    await summary(page, "Notes 1–1 of 1 matching");
    await filter("content", "Drafts");
    await summary(page, "Notes 1–3 of 3 matching");
    await shown(["Note 3", "Note 2", "Note 1"]);
    await filter("no such word", "All notes");
    await summary(page, "No notes match");
    await shoot(page, "03b-search-and-status-filter");
    await filter("", "All notes");
    await summary(page, "Notes 1–5 of 5");

    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await submit(page, "login-form", { Email: ada.email, Password: "not my password" }, "Log in");
    expect(await problemBeside(page.locator("#login-form"), "Password")).toBe("Invalid email or password");

    // A local user learns where the code will be: the page's stack is on this machine.
    await page.locator("#reset-request-form .codes-hint", {
      hasText: "This is a local stack: it prints the codes it mails (verification, password reset) in the terminal",
    }).waitFor();
    await submit(page, "reset-request-form", { Email: ada.email }, "Send reset code");
    await infoShown(page, "If an account exists for this email, a reset code has been sent to it");
    // The code is mailed; the local stack prints the mail to its log, where a developer reads it.
    const code = await readResetCode(ada.email);
    await submit(page, "reset-form", { "Reset code": "000000", "New password": newPassword }, "Set new password");
    expect(await problemBeside(page.locator("#reset-form"), "Reset code")).toBe("Invalid or expired code");
    await shoot(page, "04-reset-form-wrong-code");
    await submit(page, "reset-form", { "Reset code": code, "New password": newPassword }, "Set new password");
    await infoShown(page, "Password changed: you are signed in");
    await summary(page, "Notes 1–5 of 5");

    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await submit(page, "login-form", { Email: ada.email, Password: newPassword }, "Log in");
    await page.getByText(`Signed in as ${ada.name}`).waitFor();
    await summary(page, "Notes 1–5 of 5");
    await shoot(page, "05-logged-in-with-new-password");
  });

  it('signs in with a code by email: "Email me a code", a wrong code refused beside its input, then the right one', async () => {
    const grace = await registerUser("code-sign-in");
    const { page, context } = await newUserPage();
    await submit(page, "code-request-form", { Email: grace.email }, "Email me a code");
    await infoShown(page, "If an account exists for this email, a sign-in code has been sent to it");
    // The local stack prints the mail to its log, where a developer reads the code.
    const code = await readMailedCode(grace.email, { kind: "sign-in" });
    expect(code).toMatch(/^\d{8}$/);
    const form = page.locator("#code-sign-in-form");
    expect(await form.getByLabel("Email", { exact: true }).inputValue()).toBe(grace.email);
    await submit(page, "code-sign-in-form", { "Sign-in code": "00000000" }, "Use this code");
    expect(await problemBeside(form, "Sign-in code")).toBe("Invalid or expired code");
    await submit(page, "code-sign-in-form", { "Sign-in code": code }, "Use this code");
    await infoShown(page, "Signed in with a code");
    await page.getByText("Signed in as Test code-sign-in").waitFor();
    await shoot(page, "06-signed-in-with-a-code");
    await context.close();
  });

  it("shows each field's problem beside its input, every one at once", async () => {
    const { page } = await newUserPage();
    const form = page.locator("#register-form");
    await submit(
      page,
      "register-form",
      { Name: "Grace Hopper", Email: "grace@example", Password: "short" },
      "Register",
    );
    expect(await problemBeside(form, "Email")).toBe("email must be a valid email address");
    expect(await problemBeside(form, "Password")).toBe("password must be at least 8 characters");
    expect(await markedInvalid(form, "Name")).toBe(false);
    // Each problem is where it belongs, not in the page's error line.
    expect(await page.locator("#error").isVisible()).toBe(false);
    await shoot(page, "02-field-problems-on-register");

    // Mended, the email's problem goes; the password's stays until it is mended too.
    await submit(page, "register-form", { Email: uniqueEmail("grace") }, "Register");
    expect(await problemBeside(form, "Password")).toBe("password must be at least 8 characters");
    await expect.poll(() => markedInvalid(form, "Email")).toBe(false);
    expect(await form.locator(".field-problem:visible").allTextContents()).toEqual([
      "password must be at least 8 characters",
    ]);
  });

  it("takes a field's problem away as soon as the field changes, before the form is sent again", async () => {
    const { page } = await newUserPage();
    const form = page.locator("#register-form");
    await submit(page, "register-form", { Name: "Gil Mend", Email: "gil@example", Password: "short" }, "Register");
    expect(await problemBeside(form, "Password")).toBe("password must be at least 8 characters");
    expect(await problemBeside(form, "Email")).toBe("email must be a valid email address");
    await form.getByLabel("Password", { exact: true }).pressSequentially(" and longer");
    await expect.poll(() => markedInvalid(form, "Password")).toBe(false);
    expect(await form.locator(".field-problem").allTextContents()).toEqual(["email must be a valid email address"]);
    await form.getByLabel("Email", { exact: true }).fill(uniqueEmail("gil"));
    await expect.poll(() => form.locator(".field-problem").count()).toBe(0);

    // A refusal of the whole form goes as soon as any of its inputs changes.
    await submit(page, "login-form", { Email: uniqueEmail("nobody"), Password: "not anyone's password" }, "Log in");
    const login = page.locator("#login-form");
    expect(await problemBeside(login, "Password")).toBe("Invalid email or password");
    await login.getByLabel("Email", { exact: true }).fill(uniqueEmail("somebody"));
    await login.getByLabel("Password", { exact: true }).pressSequentially("!");
    await expect.poll(() => login.locator(".field-problem").count()).toBe(0);
  });

  it("wraps a 300-character title and one long word within the window", async () => {
    const { page } = await newUserPage();
    await submit(
      page,
      "register-form",
      { Name: "Hal Long", Email: uniqueEmail("hal"), Password: "long titles wrap" },
      "Register",
    );
    const title = "Supercalifragilistic".repeat(15);
    await submit(page, "create-form", { Title: title, Content: "x".repeat(400) }, "Create note");
    await summary(page, "Notes 1–1 of 1");
    // How far the page reaches past the window's width (a string: the tests are type-checked without the DOM's types).
    const overflow = () => page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth");
    expect(await overflow()).toBeLessThanOrEqual(0);
    await page.getByRole("button", { name: `Edit ${title}` }).click();
    await page.locator("#notes form.edit-form").waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await shoot(page, "03c-long-title-wraps");
  });

  it("says sign out one way: in the header and in the sessions list", async () => {
    const { page } = await newUserPage();
    await submit(
      page,
      "register-form",
      { Name: "Ivy Words", Email: uniqueEmail("ivy"), Password: "one word for it" },
      "Register",
    );
    await page.getByText("Signed in as Ivy Words").waitFor();
    await openAccount(page);
    await page.getByRole("button", { name: "Show sessions" }).click();
    await page.locator("#sessions li", { hasText: "This device" }).waitFor();
    const words = await page.locator("button:visible").allTextContents();
    const signingOut = words.filter((text) => /log ?out|sign ?out|log ?off/i.test(text));
    expect(signingOut.sort()).toEqual(["Sign out", "Sign out", "Sign out everywhere"]);
    expect(await page.getByText(/log ?out/i).count()).toBe(0);
  });

  /**
   * The page of a user signed in on this browser, reloaded as it is opened
   * again later (the session from storage), with `count` notes made on
   * another device, and the editor of the top note open with words typed in.
   */
  async function editingAfterReload(count: number) {
    const user = await registerUser("editor");
    const notes = [];
    for (let n = 1; n <= count; n++) notes.push(await createNote(user, { title: `Kept ${n}`, content: `words ${n}` }));
    const { context, page } = await newUserPage();
    await submit(page, "login-form", { Email: user.email, Password: user.password }, "Log in");
    await summary(page, `of ${count}`);
    await page.reload();
    await page.getByRole("button", { name: `Edit Kept ${count}` }).click();
    const content = page.locator("#notes form.edit-form").getByLabel("Content");
    await content.click();
    await page.keyboard.press("End");
    await page.keyboard.type(", typed here");
    return { user, notes, context, page, content };
  }

  it.each([
    { count: 3, afterMs: 0 },
    { count: 3, afterMs: 2_000 },
    { count: 7, afterMs: 0 },
    { count: 7, afterMs: 500 },
    { count: 7, afterMs: 2_000 },
  ])(
    "keeps the open editor and its words when another device deletes another note ($count notes, $afterMs ms later)",
    async ({ count, afterMs }) => {
      const { user, notes, context, page, content } = await editingAfterReload(count);
      await page.waitForTimeout(afterMs);
      // Another device deletes the second note of the page, which the page shows.
      const other = notes[count - 2];
      const deleted = await call(`/notes-delete?id=${other.id}`, { method: "DELETE", token: user.accessToken });
      expect(deleted.status).toBe(200);
      await expect.poll(() => titlesShown(page), { timeout: 15_000 }).not.toContain(other.title);
      await summary(page, `of ${count - 1}`);
      // The editor is still open, with what was typed, and still has the keyboard.
      await page.keyboard.type(" and after");
      expect(await content.inputValue()).toBe(`words ${count}, typed here and after`);
      await page.locator("#notes form.edit-form").getByRole("button", { name: "Save" }).click();
      await infoShown(page, "Note saved");
      await note(page, `Kept ${count}`).getByText(`words ${count}, typed here and after`).waitFor();
      await context.close();
    },
  );

  it("shows a second user none of the first user's notes", async () => {
    const { page } = await newUserPage();
    const bea = { Name: "Bea Second", Email: uniqueEmail("bea"), Password: "another good password" };
    await submit(page, "register-form", bea, "Register");
    await page.getByText("Signed in as Bea Second").waitFor();
    await summary(page, "No notes yet");
    expect(await titlesShown(page)).toEqual([]);

    await submit(page, "create-form", { Title: "Bea's only note", Content: "" }, "Create note");
    await summary(page, "Notes 1–1 of 1");
    expect(await titlesShown(page)).toEqual(["Bea's only note"]);
    await shoot(page, "06-second-user-sees-only-her-note");

    // Ada, in her own browser, still sees her five and not Bea's.
    const { page: adaPage } = await newUserPage();
    await submit(adaPage, "login-form", { Email: ada.email, Password: newPassword }, "Log in");
    await summary(adaPage, "Notes 1–5 of 5");
    expect(await titlesShown(adaPage)).not.toContain("Bea's only note");
  });

  it("keeps one session across reloads and tabs: one refresh between them, and signing out in one signs out both", async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const refreshes: string[] = [];
    context.on("request", (request) => {
      requested.push(request.url());
      if (new URL(request.url()).pathname.endsWith("/auth/refresh")) refreshes.push(request.method());
    });
    const first = await context.newPage();
    await first.goto(app.signInUrl);
    const cara = { Name: "Cara Tabs", Email: uniqueEmail("cara"), Password: "two tabs one session" };
    await submit(first, "register-form", cara, "Register");
    await first.getByText("Signed in as Cara Tabs").waitFor();
    const second = await context.newPage();
    await second.goto(app.signInUrl);
    await second.getByText("Signed in as Cara Tabs").waitFor();
    await first.reload();
    await first.getByText("Signed in as Cara Tabs").waitFor();

    // The access token runs out in both tabs at once (they share it), and both call the API at once.
    await first.evaluate(() => {
      const key = "notes-demo-session";
      const session = JSON.parse(localStorage.getItem(key) ?? "{}");
      localStorage.setItem(key, JSON.stringify({ ...session, expiresAt: new Date(Date.now() - 1000).toISOString() }));
    });
    for (const page of [first, second]) await openAccount(page);
    await Promise.all(
      [first, second].map((page) => page.getByRole("button", { name: "Show sessions" }).click()),
    );
    for (const page of [first, second]) {
      await page.locator("#sessions li", { hasText: "This device" }).waitFor();
    }
    expect(refreshes).toEqual(["POST"]);
    await submit(second, "create-form", { Title: "Written after the refresh", Content: "" }, "Create note");
    await summary(second, "Notes 1–1 of 1");
    await shoot(second, "07-two-tabs-one-session");

    await first.getByRole("button", { name: "Sign out", exact: true }).click();
    await infoShown(first, "Signed out");
    for (const page of [first, second]) await page.getByRole("heading", { name: "Log in" }).waitFor();
    await second.reload();
    await second.getByRole("heading", { name: "Log in" }).waitFor();
    await context.close();
  });

  it("verifies the address with the mailed code, changes the password and deletes the account", async () => {
    const { page } = await newUserPage();
    const dan = { Name: "Dan Self", Email: uniqueEmail("dan"), Password: "my first password" };
    await submit(page, "register-form", dan, "Register");
    await page.getByRole("heading", { name: "Verify your email" }).waitFor();
    await page.locator("#verify-form .codes-hint", { hasText: "This is a local stack" }).waitFor();
    const code = await readMailedCode(dan.Email, { kind: "verification" });
    await submit(page, "verify-form", { "Verification code": code }, "Verify");
    await infoShown(page, "Email verified");
    expect(await page.getByRole("heading", { name: "Verify your email" }).isVisible()).toBe(false);

    await openAccount(page);
    const change = { "Current password": "not my password", "New password": "my second password" };
    await submit(page, "change-password-form", change, "Change password");
    expect(await problemBeside(page.locator("#change-password-form"), "Current password")).toBe(
      "Password is incorrect",
    );
    await submit(page, "change-password-form", { ...change, "Current password": dan.Password }, "Change password");
    await infoShown(page, "Password changed: your other devices are signed out");
    await submit(page, "create-form", { Title: "Dan's note", Content: "" }, "Create note");
    await summary(page, "Notes 1–1 of 1");
    await shoot(page, "08-account-settings");

    await submit(page, "delete-account-form", { Password: "my second password" }, "Delete my account");
    await infoShown(page, "Your account and its notes are deleted");
    await page.getByRole("heading", { name: "Log in" }).waitFor();
    await submit(page, "login-form", { Email: dan.Email, Password: "my second password" }, "Log in");
    expect(await problemBeside(page.locator("#login-form"), "Password")).toBe("Invalid email or password");
  });

  it("follows another tab's notes live, without a reload, and stops watching on sign-out", async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const streams: string[] = [];
    context.on("request", (request) => {
      requested.push(request.url());
      if (request.method() === "GET" && new URL(request.url()).pathname.endsWith("/notes-stream")) {
        streams.push(request.url());
      }
    });
    const first = await context.newPage();
    await first.goto(app.signInUrl);
    const eli = { Name: "Eli Live", Email: uniqueEmail("eli"), Password: "two tabs one list" };
    await submit(first, "register-form", eli, "Register");
    await first.locator("#live-status", { hasText: "Live" }).waitFor();
    const second = await context.newPage();
    await second.goto(app.signInUrl);
    await second.locator("#live-status", { hasText: "Live" }).waitFor();
    await summary(second, "No notes yet");
    // Set in the page: a reload would lose it.
    await second.evaluate(() => Object.assign(window, { notReloaded: true }));

    await submit(first, "create-form", { Title: "Made in the first tab", Content: "live" }, "Create note");
    await note(second, "Made in the first tab").getByText("live").waitFor({ timeout: 15_000 });
    await summary(second, "Notes 1–1 of 1");
    await first.getByRole("button", { name: "Edit Made in the first tab" }).click();
    await first.locator("#notes form.edit-form").getByLabel("Content").fill("edited live");
    await first.locator("#notes form.edit-form").getByRole("button", { name: "Save" }).click();
    await note(second, "Made in the first tab").getByText("edited live").waitFor({ timeout: 15_000 });
    await shoot(second, "08-live-from-another-tab");
    await first.getByRole("button", { name: "Delete Made in the first tab" }).click();
    await summary(second, "No notes yet");
    expect(await second.evaluate(() => "notReloaded" in window)).toBe(true);

    await first.getByRole("button", { name: "Sign out", exact: true }).click();
    for (const page of [first, second]) await page.getByRole("heading", { name: "Log in" }).waitFor();
    expect(await second.locator("#live-status").isVisible()).toBe(false);
    // Each tab opened its stream once; signed out, neither opens another.
    const opened = streams.length;
    expect(opened).toBe(2);
    await second.waitForTimeout(3_000);
    expect(streams.length).toBe(opened);
    await context.close();
  });

  it("shows a conflict when a note was saved in another tab: keep mine, or take theirs", async () => {
    const context = await browser.newContext({
      viewport: { width: 1100, height: 900 },
    });
    context.on("request", (request) => requested.push(request.url()));
    const first = await context.newPage();
    await first.goto(app.signInUrl);
    const dora = {
      Name: "Dora Conflict",
      Email: uniqueEmail("dora"),
      Password: "two tabs one note",
    };
    await submit(first, "register-form", dora, "Register");
    await submit(first, "create-form", {
      Title: "Shared",
      Content: "as created",
    }, "Create note");
    await summary(first, "Notes 1–1 of 1");
    const second = await context.newPage();
    await second.goto(app.signInUrl);
    await note(second, "Shared").getByText("as created").waitFor();

    /** Opens the editor of the note "Shared" on `page`. */
    const edit = (page: Page) => page.getByRole("button", { name: "Edit Shared" }).click();
    /** Saves `content` in the editor `page` has open, over the version it was opened on. */
    const save = async (page: Page, content: string) => {
      const editor = page.locator("#notes form.edit-form");
      await editor.getByLabel("Content").fill(content);
      await editor.getByRole("button", { name: "Save" }).click();
    };

    // The second tab opens its editor first: the first tab's save, shown live, leaves that editor as it is.
    await edit(second);
    await edit(first);
    await save(first, "first tab's words");
    await infoShown(first, "Note saved");
    // The second tab's editor still holds the version both tabs loaded: its save is refused, and nothing is lost.
    await save(second, "second tab's words");
    const conflict = second.locator("#notes li .conflict");
    await second.locator(".conflict-notice").waitFor();
    expect(await conflict.locator(".version-content").allTextContents())
      .toEqual([
        "first tab's words",
        "second tab's words",
      ]);
    await shoot(second, "08-conflict-keep-mine-or-take-theirs");
    // The first tab opens its editor again, on its own version, before the second tab's is saved.
    await edit(first);
    await second.getByRole("button", { name: "Keep mine" }).click();
    await infoShown(second, "Note saved");
    await note(second, "Shared").getByText("second tab's words").waitFor();

    // Now the first tab is behind (its editor was open meanwhile, so the live update left it): it takes theirs.
    await save(first, "first tab again");
    await first.locator(".conflict-notice").waitFor();
    await first.getByRole("button", { name: "Take theirs" }).click();
    await infoShown(first, "Kept the version saved elsewhere");
    await note(first, "Shared").getByText("second tab's words").waitFor();
    await first.reload();
    await note(first, "Shared").getByText("second tab's words").waitFor();
    await context.close();
  });

  it("serves the API reference at /docs, rendered from openapi.json", async () => {
    const { page } = await newUserPage();
    await page.goto(`${apiOrigin}/docs`);
    await page.getByText("Personal notes and accounts").first().waitFor();
    await page.locator(".opblock-summary-path", { hasText: "/auth/login" }).first().waitFor();
    // One block per documented operation.
    const operations = Object.values(openApiDocument.paths).flatMap((methods) => Object.keys(methods));
    expect(await page.locator(".opblock").count()).toBe(operations.length);
    // Swagger UI states its doubts about a document in a "Warning" box; this one gives it none.
    expect(await page.getByText("Warning", { exact: true }).count()).toBe(0);
    await shoot(page, "09-api-reference");
  });

  it("serves its favicon, and nothing the page asked of the app's server was missing", async () => {
    const { page } = await newUserPage();
    const icon = await page.locator('link[rel="icon"]').getAttribute("href");
    const answer = await fetch(new URL(icon ?? "/favicon.ico", app.url));
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toMatch(/^image\//);
    expect(notFound).toEqual([]);
  });

  it("offers no provider the stack does not have, and says how to start one", async () => {
    // As `LOCAL_IDENTITY_PROVIDER=true npm run demo` beside a stack started without it.
    const asked = await serveDemoApp(functionsUrl, anonKey, { providers: "local" });
    try {
      const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
      const page = await context.newPage();
      await page.goto(asked.signInUrl);
      await page.getByRole("heading", { name: "Log in" }).waitFor();
      const hint = page.locator("#provider-hint");
      await hint.waitFor();
      expect(await hint.textContent()).toContain("LOCAL_IDENTITY_PROVIDER=true");
      // A provider's button, not the passkey's.
      expect(await page.getByRole("button", { name: /^Sign in with (?!a passkey)/ }).count()).toBe(0);
      await context.close();
    } finally {
      await asked.close();
    }
  });

  it("called the functions across origins and fetched nothing from elsewhere", () => {
    const origins = new Set(requested.map((url) => new URL(url).origin));
    expect(origins).toEqual(new Set([new URL(app.url).origin, apiOrigin]));
  });
});
