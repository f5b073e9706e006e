/**
 * One note of the list: its title, status and content, and the buttons to
 * edit, publish (or unpublish: back to draft) and delete it, and its files. Every save
 * names the version the item shows; when the note was changed elsewhere
 * meanwhile, the item shows both versions and offers "Keep mine" (save again
 * over the stored version) or "Take theirs". Text goes in through textContent
 * only, so a note cannot inject markup.
 *
 * @example
 * ```ts
 * list.append(noteItem(note, { save, remove, takeTheirs }));
 * ```
 */
import type { Note, NoteChanges } from "../../../shared/index.ts";

export interface NoteActions {
  /**
   * Saves `changes` only while the note still has version `expectedUpdatedAt`;
   * answers the stored note when it has moved on (nothing was saved), else undefined.
   * A refusal of the input is shown beside the inputs of `form`, the editor it came from.
   */
  save(changes: NoteChanges, expectedUpdatedAt: string, form?: HTMLFormElement): Promise<Note | undefined>;
  remove(): Promise<void>;
  /** Drops the user's unsaved version and shows the stored notes. */
  takeTheirs(): Promise<void>;
  /** The note's files and a picker to attach one. */
  files(): HTMLElement;
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

/**
 * Whether `item` holds the user's unsaved version: its editor is open, or it
 * shows a conflict. A change made elsewhere must not replace such an item:
 * its save names the version it was opened on, so it meets that change as a
 * conflict instead of losing the user's words.
 */
export function holdsUnsavedWork(item: Element): boolean {
  return item.querySelector("form.edit-form, .conflict") !== null;
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
      note.status === "DRAFT"
        ? element("button", {
          type: "button",
          textContent: "Publish",
          onclick: () => saveOrResolve({ status: "PUBLISHED" }, note.updatedAt),
        })
        : element("button", {
          type: "button",
          textContent: "Unpublish",
          title: "Back to draft",
          onclick: () => saveOrResolve({ status: "DRAFT" }, note.updatedAt),
        }),
      element("button", { type: "button", textContent: "Delete", onclick: () => actions.remove() }),
    );
    buttons.querySelectorAll("button").forEach((button) =>
      button.setAttribute("aria-label", `${button.textContent} ${title}`)
    );
    item.replaceChildren(
      element("h3", {}, title, " ", element("span", { className: `status ${note.status}`, textContent: note.status })),
      element("p", { textContent: note.content }),
      actions.files(),
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
      element(
        "div",
        { className: "note-actions" },
        element("button", { type: "submit", textContent: "Save" }),
        element("button", { type: "button", textContent: "Cancel", onclick: view }),
      ),
    );
    form.onsubmit = (event) => {
      event.preventDefault();
      void saveOrResolve({ title: titleInput.value, content: contentInput.value }, note.updatedAt, form);
    };
    item.replaceChildren(form);
    titleInput.focus();
  };

  /** Saves over `version`; when another tab or device saved first, shows both versions instead. */
  const saveOrResolve = async (mine: NoteChanges, version: string, form?: HTMLFormElement) => {
    const theirs = await actions.save(mine, version, form);
    if (theirs) resolve(mine, theirs);
  };

  const resolve = (mine: NoteChanges, theirs: Note) => {
    const version = (heading: string, shown: { title?: string; content?: string; status?: string }) =>
      element(
        "div",
        { className: "version" },
        element("h4", { textContent: heading }),
        element("p", { className: "version-title", textContent: shown.title || "(untitled)" }),
        element("p", { className: "version-content", textContent: shown.content ?? "" }),
        element("p", { className: "version-status", textContent: shown.status ?? "" }),
      );
    item.replaceChildren(
      element("p", {
        className: "conflict-notice",
        textContent: "This note was changed in another tab or device since you opened it.",
      }),
      element(
        "div",
        { className: "conflict" },
        version("Theirs (saved)", theirs),
        // Fields the user did not touch stay as they are stored, so they show theirs.
        version("Yours (not saved)", { ...theirs, ...mine }),
      ),
      element(
        "div",
        { className: "note-actions" },
        element("button", {
          type: "button",
          textContent: "Keep mine",
          onclick: () => saveOrResolve(mine, theirs.updatedAt),
        }),
        element("button", { type: "button", textContent: "Take theirs", onclick: () => actions.takeTheirs() }),
      ),
    );
  };

  view();
  return item;
}
