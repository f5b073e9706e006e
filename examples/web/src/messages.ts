/**
 * The page's two message lines: API errors exactly as the API words them, and
 * confirmations.
 *
 * @example
 * ```ts
 * await reportErrors(() => client.login(credentials));
 * ```
 */
import { byId } from "./dom.ts";

const errorLine = byId("error", HTMLParagraphElement);
const infoLine = byId("info", HTMLParagraphElement);

function show(line: HTMLElement, text: string | undefined): void {
  line.textContent = text ?? "";
  line.hidden = !text;
}

/** Shows a confirmation and clears any error. */
export function showInfo(text: string): void {
  show(errorLine, undefined);
  show(infoLine, text);
}

/** Runs `action`; a failure is shown as the API worded it (or as the network error). */
export async function reportErrors(action: () => Promise<void>): Promise<void> {
  show(errorLine, undefined);
  show(infoLine, undefined);
  try {
    await action();
  } catch (error) {
    // A NotesApiError's message is the API's own; any other error is the browser's (e.g. network down).
    show(errorLine, error instanceof Error ? error.message : String(error));
  }
}
