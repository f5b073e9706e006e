/**
 * Looking up the page's fixed elements, failing loudly when index.html and
 * the code disagree.
 *
 * @example
 * ```ts
 * const list = byId("notes", HTMLUListElement);
 * ```
 */

/** The element with `id`, which must be an instance of `type`. */
export function byId<T extends HTMLElement>(id: string, type: new () => T): T {
  const found = document.getElementById(id);
  if (!(found instanceof type)) throw new Error(`index.html has no #${id} of the expected kind`);
  return found;
}

/** Calls `handler` with the form's fields on submit, instead of navigating. */
export function onSubmit(
  id: string,
  handler: (fields: Record<string, string>, form: HTMLFormElement) => Promise<void>,
) {
  const form = byId(id, HTMLFormElement);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const fields: Record<string, string> = {};
    for (const [name, value] of new FormData(form)) fields[name] = String(value);
    void handler(fields, form);
  });
}
