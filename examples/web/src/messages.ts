/**
 * What the page says back: confirmations on the page's info line, and API
 * errors exactly as the API words them, beside what they concern: a 400's
 * problems beside their inputs, any other refusal of a form's input beside
 * the input it concerns (a wrong password beside the password) or else at
 * the form's buttons; only errors of no form go on the page's error line
 * (docs/clients.md, "What to show the user"). A problem goes as soon as the
 * input it concerns changes.
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

/**
 * The inputs a refusal that names no field concerns, by its `code`: the first
 * of them the form has gets the message.
 */
const inputsOfCode: Record<string, readonly string[]> = {
  invalid_credentials: ["password", "currentPassword"],
  invalid_code: ["code", "recoveryCode"],
  second_factor_locked: ["code", "recoveryCode"],
  email_taken: ["email"],
  user_not_found: ["email"],
};

/** Removes `problem` and the marks of the input it was shown for. */
function removeProblem(problem: Element): void {
  problem.ownerDocument.querySelectorAll(`[aria-describedby="${CSS.escape(problem.id)}"]`).forEach((control) => {
    control.removeAttribute("aria-invalid");
    control.removeAttribute("aria-describedby");
  });
  problem.remove();
}

/** Removes the problems shown in `form` and the marks of its inputs. */
function clearProblems(form: HTMLFormElement): void {
  form.querySelectorAll(".field-problem, .form-problem").forEach(removeProblem);
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

/** Shows `message` in `form`, beside the input its `code` concerns, else above the form's buttons. */
function showFormProblem(form: HTMLFormElement, message: string, code: string | undefined): void {
  const control = (inputsOfCode[code ?? ""] ?? []).map((name) => controlOf(form, name))
    .find((found) => found !== undefined && !found.closest("[hidden]"));
  if (control) {
    showProblem(control, [message]);
    control.focus();
    return;
  }
  const problem = document.createElement("p");
  problem.className = "form-problem";
  problem.id = `field-problem-${++problemCount}`;
  problem.setAttribute("role", "alert");
  problem.textContent = message;
  const firstButton = form.querySelector("button");
  const buttons = firstButton?.parentElement === form ? firstButton : firstButton?.parentElement;
  if (buttons && buttons !== form) buttons.before(problem);
  else form.append(problem);
}

// Whatever the user changes in a form takes away the problem shown for it, and a problem of the whole form.
document.addEventListener("input", (event) => {
  const control = event.target;
  if (!(control instanceof Element)) return;
  const described = control.getAttribute("aria-describedby");
  const problem = described ? document.getElementById(described) : null;
  if (problem?.classList.contains("field-problem")) removeProblem(problem);
  control.closest("form")?.querySelectorAll(".form-problem").forEach(removeProblem);
});

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
 * error). With a `form`, it is shown in that form: a 400's problems beside the
 * inputs they concern, any other beside the input its code concerns or at the
 * form's buttons. Without one, it goes on the error line.
 */
export async function reportErrors(action: () => Promise<void>, form?: HTMLFormElement): Promise<void> {
  show(errorLine, undefined);
  show(infoLine, undefined);
  if (form) clearProblems(form);
  try {
    await action();
  } catch (error) {
    if (!form) return showError(error);
    if (error instanceof NotesApiError && error.fields.length > 0) {
      const unplaced = showFieldProblems(form, error);
      if (unplaced.length > 0) showFormProblem(form, unplaced.join("; "), undefined);
      return;
    }
    const code = error instanceof NotesApiError ? error.code : undefined;
    showFormProblem(form, error instanceof Error ? error.message : String(error), code);
  }
}

/** Shows `error` on the error line, leaving any confirmation shown: for work the user did not start (a live update). */
export function showError(error: unknown): void {
  // A NotesApiError's message is the API's own; any other error is the browser's (e.g. network down).
  show(errorLine, error instanceof Error ? error.message : String(error));
}
