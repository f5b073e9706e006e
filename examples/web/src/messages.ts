/**
 * What the page says back: confirmations and API errors on the page's two
 * message lines, exactly as the API words them, and the problems of a 400
 * beside the inputs they concern (docs/clients.md, "What to show the user").
 *
 * @example
 * ```ts
 * await reportErrors(() => client.auth.login(credentials), loginForm);
 * ```
 */
import { NotesApiError } from "../../../shared/index.ts";
import { byId } from "./dom.ts";

const errorLine = byId("error", HTMLParagraphElement);
const infoLine = byId("info", HTMLParagraphElement);

/** Numbers the problem elements, so every input's `aria-describedby` names its own. */
let problemCount = 0;

function show(line: HTMLElement, text: string | undefined): void {
  line.textContent = text ?? "";
  line.hidden = !text;
}

/** Shows a confirmation and clears any error. */
export function showInfo(text: string): void {
  show(errorLine, undefined);
  show(infoLine, text);
}

type Control = HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;

/** The control of `form` a problem's `field` names, if it has one. */
function controlOf(form: HTMLFormElement, field: string | undefined): Control | undefined {
  const found = field === undefined ? null : form.elements.namedItem(field);
  return found instanceof HTMLInputElement || found instanceof HTMLTextAreaElement ||
      found instanceof HTMLSelectElement
    ? found
    : undefined;
}

/** Removes the problems shown in `form` and the marks of its inputs. */
function clearProblems(form: HTMLFormElement): void {
  form.querySelectorAll(".field-problem").forEach((problem) => problem.remove());
  form.querySelectorAll("[aria-invalid]").forEach((control) => {
    control.removeAttribute("aria-invalid");
    control.removeAttribute("aria-describedby");
  });
}

/** Shows `messages` right below `control` (after its label), and ties them to it for screen readers. */
function showProblem(control: Control, messages: string[]): void {
  const problem = document.createElement("p");
  problem.className = "field-problem";
  problem.id = `field-problem-${++problemCount}`;
  problem.textContent = messages.join("\n");
  (control.closest("label") ?? control).after(problem);
  control.setAttribute("aria-invalid", "true");
  control.setAttribute("aria-describedby", problem.id);
}

/**
 * Shows each problem of `error` beside the control of `form` it names, and
 * answers the messages of those that name none (the form as a whole).
 */
function showFieldProblems(form: HTMLFormElement, error: NotesApiError): string[] {
  const byControl = new Map<Control, string[]>();
  const unplaced: string[] = [];
  for (const { field, message } of error.fields) {
    const control = controlOf(form, field);
    if (control) byControl.set(control, [...(byControl.get(control) ?? []), message]);
    else unplaced.push(message);
  }
  for (const [control, messages] of byControl) showProblem(control, messages);
  // The first input to mend gets the focus, as a browser's own validation does.
  byControl.keys().next().value?.focus();
  return unplaced;
}

/**
 * Runs `action`; a failure is shown as the API worded it (or as the network
 * error). A 400's problems go beside the inputs of `form` they concern; only
 * those that concern no input go on the error line.
 */
export async function reportErrors(action: () => Promise<void>, form?: HTMLFormElement): Promise<void> {
  show(errorLine, undefined);
  show(infoLine, undefined);
  if (form) clearProblems(form);
  try {
    await action();
  } catch (error) {
    if (form && error instanceof NotesApiError && error.fields.length > 0) {
      const unplaced = showFieldProblems(form, error);
      if (unplaced.length > 0) show(errorLine, unplaced.join("; "));
      return;
    }
    showError(error);
  }
}

/** Shows `error` on the error line, leaving any confirmation shown: for work the user did not start (a live update). */
export function showError(error: unknown): void {
  // A NotesApiError's message is the API's own; any other error is the browser's (e.g. network down).
  show(errorLine, error instanceof Error ? error.message : String(error));
}
