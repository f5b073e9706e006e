/**
 * Attachments in the demo app, in headless Chromium: a person attaches a picture to a note on one page, watches the
 * upload's progress, and sees the picture in the note there and on a second page of the same account (its live
 * watch brings the note's change). Screenshots go to test-results/browser/ (git-ignored).
 */
import { mkdirSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { anonKey, type RegisteredUser, registerUser } from "../support/api.ts";
import { createNote } from "../support/notes.ts";
import { launchChromium } from "./chromium.ts";
import { serveDemoApp } from "./demo-app.ts";

const screenshots = "test-results/browser";
// A real picture: one red pixel.
const redPixel = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

let browser: Browser;
let app: Awaited<ReturnType<typeof serveDemoApp>>;

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  app = await serveDemoApp(inject("baseUrl"), anonKey);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
});

/** A page of its own, signed in as `user`, showing their notes. */
async function signedInPage(user: RegisteredUser): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  await page.goto(app.signInUrl);
  const form = page.locator("#login-form");
  await form.getByLabel("Email", { exact: true }).fill(user.email);
  await form.getByLabel("Password", { exact: true }).fill(user.password);
  await form.getByRole("button", { name: "Log in" }).click();
  await page.locator("#notes li.note").first().waitFor();
  return page;
}

/** Whether the note's picture is shown and loaded (its bytes came from the store and decode as an image). */
const pictureShown = (page: Page) =>
  page.evaluate<boolean>(
    "[...document.querySelectorAll('#notes img.attachment')].some((image) => image.complete && image.naturalWidth === 1)",
  );

it("attaches a picture on one page and shows it in the note there and on a second page of the same user", async () => {
  const ada = await registerUser("ada-files");
  await createNote(ada, { title: "Whiteboard" });
  const first = await signedInPage(ada);
  const second = await signedInPage(ada);

  const progress = first.locator("#notes progress");
  await first.getByLabel("Attach a file to Whiteboard").setInputFiles({
    name: "whiteboard.png",
    mimeType: "image/png",
    buffer: redPixel,
  });
  await expect.poll(() => pictureShown(first), { timeout: 15_000 }).toBe(true);
  expect(await progress.isHidden()).toBe(true);
  await expect.poll(() => first.locator("#space-used").textContent()).toMatch(/Files on this page: \d+ B/);
  await first.screenshot({ path: `${screenshots}/attachment-uploaded.png`, fullPage: true });

  // The other page learns of the note's change on its live watch, and shows the picture too.
  await expect.poll(() => pictureShown(second), { timeout: 15_000 }).toBe(true);
  await second.screenshot({ path: `${screenshots}/attachment-second-page.png`, fullPage: true });
});

it("attaches a picture over 6 MiB resumably, in tus parts the browser sends straight to the store", async () => {
  const bea = await registerUser("bea-files");
  await createNote(bea, { title: "Scans" });
  const page = await signedInPage(bea);
  const parts: string[] = [];
  page.on("requestfinished", (request) => {
    if (request.method() === "PATCH" && request.url().includes("/storage/v1/upload/resumable/sign/")) {
      parts.push(request.url());
    }
  });
  // The same pixel, then 8 MiB after its end that a decoder ignores: too large for one PUT, so a tus upload.
  const large = Buffer.concat([redPixel, Buffer.alloc(8 * 1024 * 1024)]);
  await page.getByLabel("Attach a file to Scans").setInputFiles({
    name: "scan.png",
    mimeType: "image/png",
    buffer: large,
  });
  await expect.poll(() => pictureShown(page), { timeout: 30_000 }).toBe(true);
  await page.screenshot({ path: `${screenshots}/attachment-resumable.png`, fullPage: true });
  // Two parts of at most 6 MiB, to one upload.
  expect(parts.length).toBe(2);
  expect(new Set(parts).size).toBe(1);
  await expect.poll(() => page.locator("#space-used").textContent()).toMatch(/Files on this page: 8\.0 MB/);
});
