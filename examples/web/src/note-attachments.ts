/**
 * A note's files in the demo: images shown inline, other files as links that
 * download, a file picker that attaches to the note with a progress bar, and
 * the account's space used by the files the page shows. URLs are signed and
 * live minutes, so they are asked for when the files are shown. Names go in
 * through textContent only.
 *
 * @example
 * ```ts
 * item.append(noteAttachments(client, note, { onAttached, onShown, onError }));
 * ```
 */
import type { Attachment, Note, NotesClient } from "../../../shared/index.ts";

export interface AttachmentHooks {
  /** After a file was attached: the note has changed. */
  onAttached(): void;
  /** After the files were shown: the space they take has changed. */
  onShown(): void;
  /** Shows a failure on the page's error line. */
  onError(error: unknown): void;
}

/** Bytes as a person reads them. */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1_048_576) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1_048_576).toFixed(1)} MB`;
}

/** The bytes of the files each note on the page has, by note id, for the space used. */
export const shownBytes = new Map<string, number>();

async function fileView(client: NotesClient, file: Attachment): Promise<HTMLElement> {
  const url = await client.attachments.url(file.id);
  if (file.type.startsWith("image/")) {
    const image = Object.assign(document.createElement("img"), { src: url, alt: file.name, className: "attachment" });
    return image;
  }
  const link = Object.assign(document.createElement("a"), { href: url, textContent: file.name, rel: "noopener" });
  link.append(` (${sizeText(file.size)})`);
  return link;
}

/** The files of `note` and a picker to attach one, as one section of its list item. */
export function noteAttachments(client: NotesClient, note: Note, hooks: AttachmentHooks): HTMLElement {
  const section = Object.assign(document.createElement("div"), { className: "attachments" });
  const files = Object.assign(document.createElement("div"), { className: "attachment-list" });
  const picker = Object.assign(document.createElement("input"), {
    type: "file",
    accept: "image/png,image/jpeg,image/gif,image/webp,application/pdf,text/plain,text/markdown",
  });
  picker.setAttribute("aria-label", `Attach a file to ${note.title || "(untitled)"}`);
  const progress = Object.assign(document.createElement("progress"), { max: 1, value: 0, hidden: true });
  progress.setAttribute("aria-label", "Upload progress");

  const show = async () => {
    const listed = note.attachments > 0 ? await client.attachments.list(note.id) : [];
    shownBytes.set(note.id, listed.reduce((sum, file) => sum + file.size, 0));
    files.replaceChildren(...await Promise.all(listed.map((file) => fileView(client, file))));
  };

  picker.onchange = async () => {
    const file = picker.files?.[0];
    if (!file) return;
    progress.hidden = false;
    try {
      await client.attachments.upload(note.id, file, {
        onProgress: (sent, total) => (progress.value = total === 0 ? 1 : sent / total),
      });
      hooks.onAttached();
    } catch (error) {
      hooks.onError(error);
    } finally {
      progress.hidden = true;
      picker.value = "";
    }
  };

  section.append(files, picker, progress);
  show().then(hooks.onShown, hooks.onError);
  return section;
}
