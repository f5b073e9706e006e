/**
 * Filling in the demo app's forms as a person does, by their visible labels, and reading the refusals it shows: a
 * form's as a whole above its buttons, a field's right below that field.
 *
 * @example
 * ```ts
 * await submit(page, "login-form", { Email: email, Password: password }, "Log in");
 * ```
 */
import type { Locator, Page } from "playwright-core";
import { expect } from "vitest";

/** Fills the fields of the form `formId`, by their visible labels, and submits it. */
export async function submit(page: Page, formId: string, fields: Record<string, string>, button: string) {
  const form = page.locator(`#${formId}`);
  for (const [label, value] of Object.entries(fields)) await form.getByLabel(label, { exact: true }).fill(value);
  await form.getByRole("button", { name: button }).click();
}

/** Waits for the refusal of the form `formId` as a whole, shown above its buttons, and answers its text. */
export async function formProblem(page: Page, formId: string): Promise<string | null> {
  const problem = page.locator(`#${formId} .form-problem`);
  await problem.waitFor({ state: "visible" });
  // In the form, not on the page's error line at the top.
  expect(await page.locator("#error").isVisible()).toBe(false);
  return problem.textContent();
}

/**
 * The problem shown for the input labelled `label` in `form`: the text its
 * `aria-describedby` names, which must sit right below the input. Waits for
 * the input to be marked invalid.
 */
export async function problemBeside(form: Locator, label: string): Promise<string | null> {
  const input = form.getByLabel(label, { exact: true });
  await expect.poll(() => input.getAttribute("aria-invalid"), { timeout: 10_000 }).toBe("true");
  const problem = form.page().locator(`#${await input.getAttribute("aria-describedby")}`);
  const [at, below] = [await input.boundingBox(), await problem.boundingBox()];
  if (!at || !below) throw new Error(`the problem of ${label} is not shown`);
  // Beside the input: starting within a line below it, and overlapping it across.
  expect(below.y).toBeGreaterThanOrEqual(at.y + at.height - 1);
  expect(below.y).toBeLessThan(at.y + at.height + 24);
  expect(below.x).toBeLessThan(at.x + at.width);
  expect(below.x + below.width).toBeGreaterThan(at.x);
  return problem.textContent();
}
