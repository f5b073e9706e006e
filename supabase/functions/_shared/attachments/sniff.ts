/**
 * What a file is, from its first bytes, never from what the client declared:
 * the signatures of the image and PDF formats (as the WHATWG MIME Sniffing
 * standard lists them), and for text, UTF-8 without binary control characters
 * that is not an HTML document.
 *
 * @example
 * ```ts
 * matchesType(new Uint8Array([0x25, 0x50, 0x44, 0x46, 0x2d]), "application/pdf"); // true
 * ```
 */
import type { AttachmentType } from "../contract/attachments.ts";

/** How many leading bytes the checks read. */
export const sniffBytes = 4096;

const ascii = (text: string) => [...text].map((char) => char.charCodeAt(0));
const startsWith = (head: Uint8Array, signature: readonly (number | undefined)[], at = 0) =>
  head.length >= at + signature.length &&
  signature.every((byte, index) => byte === undefined || head[at + index] === byte);

const binarySignatures: Record<Exclude<AttachmentType, "text/plain" | "text/markdown">, (head: Uint8Array) => boolean> =
  {
    "image/png": (head) => startsWith(head, [0x89, ...ascii("PNG"), 0x0d, 0x0a, 0x1a, 0x0a]),
    "image/jpeg": (head) => startsWith(head, [0xff, 0xd8, 0xff]),
    "image/gif": (head) => startsWith(head, ascii("GIF87a")) || startsWith(head, ascii("GIF89a")),
    "image/webp": (head) => startsWith(head, ascii("RIFF")) && startsWith(head, ascii("WEBPVP"), 8),
    "application/pdf": (head) => startsWith(head, ascii("%PDF-")),
  };

// The controls no text file holds (NUL, the C0 controls but tab, line feed, form feed and carriage return, DEL).
// deno-lint-ignore no-control-regex
const binaryControl = /[\u0000-\u0008\u000b\u000e-\u001f\u007f]/;
// What a browser would render as a page: an HTML document's start, after a byte order mark and white space.
const htmlDocument = /^\ufeff?\s*<(!doctype\s+html|html[\s>]|head[\s>]|body[\s>]|script[\s>]|svg[\s>])/i;

/** Text: UTF-8 (a sequence cut at the end of the head allowed), no binary control, not an HTML document. */
function isText(head: Uint8Array, complete: boolean): boolean {
  let decoded: string;
  try {
    decoded = new TextDecoder("utf-8", { fatal: true }).decode(head, { stream: !complete });
  } catch {
    return false;
  }
  return !binaryControl.test(decoded) && !htmlDocument.test(decoded);
}

/**
 * Whether `head`, the first bytes of a file (all of it when `complete`), is of `type`. An image or a PDF must carry
 * its format's signature; text must be text, and no file with an image's or PDF's signature is text.
 */
export function matchesType(head: Uint8Array, type: AttachmentType, complete = false): boolean {
  if (type === "text/plain" || type === "text/markdown") {
    return !Object.values(binarySignatures).some((signature) => signature(head)) && isText(head, complete);
  }
  return binarySignatures[type](head);
}

/** The types a browser may show in the page: images and PDF. Anything else is served as a download. */
export function isShownInline(type: AttachmentType): boolean {
  return type.startsWith("image/") || type === "application/pdf";
}
