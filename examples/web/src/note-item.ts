/**
 * One note of the list: its title, status and content, and the buttons to
 * edit, publish and delete it. Text goes in through textContent only, so a
 * note cannot inject markup.
 *
 * @example
 * ```ts
 * list.append(noteItem(note, { save, remove }));
 * ```
 */
import type { Note, SaveNoteBody } from "../../../shared/index.ts";

export interface NoteActions {
  save(changes: Omit<SaveNoteBody, "id">): Promise<void>;
  remove(): Promise<void>;
}

function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  properties: Partial<HTMLElementTagNameMap[K]> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = Object.assign(document.createElement(tag), properties);
  node.append(...children);
  return node;
}

function labelled(text: string, control: HTMLElement): HTMLLabelElement {
  return element("label", {}, `${text} `, control);
}

/** The list item showing `note`; in edit mode it becomes a small form. */
export function noteItem(note: Note, actions: NoteActions): HTMLLIElement {
  const item = element("li", { className: "note" });
  item.dataset.noteId = note.id;
  const title = note.title || "(untitled)";

  const view = () => {
    const buttons = element(
      "div",
      { className: "note-actions" },
      element("button", { type: "button", textContent: "Edit", onclick: edit }),
      ...(note.status === "DRAFT"
        ? [
          element("button", {
            type: "button",
            textContent: "Publish",
            onclick: () => actions.save({ status: "PUBLISHED" }),
          }),
        ]
        : []),
      element("button", { type: "button", textContent: "Delete", onclick: () => actions.remove() }),
    );
    buttons.querySelectorAll("button").forEach((button) =>
      button.setAttribute("aria-label", `${button.textContent} ${title}`)
    );
    item.replaceChildren(
      element("h3", {}, title, " ", element("span", { className: `status ${note.status}`, textContent: note.status })),
      element("p", { textContent: note.content }),
      buttons,
    );
  };

  const edit = () => {
    const titleInput = element("input", { name: "title", value: note.title });
    const contentInput = element("textarea", { name: "content", value: note.content, rows: 3 });
    const form = element(
      "form",
      { className: "edit-form" },
      labelled("Title", titleInput),
      labelled("Content", contentInput),
      element("button", { type: "submit", textContent: "Save" }),
      element("button", { type: "button", textContent: "Cancel", onclick: view }),
    );
    form.onsubmit = (event) => {
      event.preventDefault();
      void actions.save({ title: titleInput.value, content: contentInput.value });
    };
    item.replaceChildren(form);
    titleInput.focus();
  };

  view();
  return item;
}
