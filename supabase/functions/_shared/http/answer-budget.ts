/**
 * A bound on the memory an isolate holds for answers its clients have not
 * taken yet. An answer is built whole in memory (a page of 100 notes can be
 * 12 MB of JSON) and stays there until the connection has taken its last
 * byte, so a client that asks for large answers and never reads them holds
 * that memory for as long as its connection lasts; a few hundred of them
 * exhaust it. Large answers therefore share one budget per isolate: an answer
 * that would take the bytes held past `answerBudgetBytes` is not sent, and
 * its request is answered 503 with `Retry-After` instead. An answer's share is
 * given back once its last piece has been handed to the connection, or once
 * the connection is dropped (the server cancels the body). Small answers are
 * sent as they are: the connection's socket buffers take them whole.
 *
 * @example
 * ```ts
 * const body = budgetedBody(JSON.stringify(page));
 * if (!body) throw new ServiceUnavailableError({ retryAfter: 1 });
 * ```
 */

/** Answers above this size draw on the budget. */
export const largeAnswerBytes = 64 * 1024;
/** The bytes of large answers an isolate may hold at once: two or three pages of the largest notes. */
export const answerBudgetBytes = 32 * 1024 * 1024;

/** Each read of a large answer's body hands over this much, so the server writes it a piece at a time. */
const pieceBytes = 64 * 1024;
/** UTF-8 takes at most 3 bytes per UTF-16 unit: a string this short is a small answer without encoding it. */
const surelySmallChars = Math.floor(largeAnswerBytes / 3);

let heldBytes = 0;

/** The bytes the budget has room for now: a stream reads no larger a batch than that. */
export function answerBudgetRoom(): number {
  return answerBudgetBytes - heldBytes;
}

/** A response body, and its `Content-Length` when it is a stream (which carries none of its own). */
export interface AnswerBody {
  body: BodyInit;
  contentLength?: string;
}

/**
 * `text` as a response body: as it is when small; when large, as a stream
 * that holds its share of the budget until read to the end or cancelled;
 * undefined when the budget has no room for it.
 */
export function budgetedBody(text: string): AnswerBody | undefined {
  if (text.length <= surelySmallChars) return { body: text };
  // A string takes at least a byte per unit: one that cannot fit is refused before it is encoded.
  if (heldBytes + text.length > answerBudgetBytes) return undefined;
  const encoded = new TextEncoder().encode(text);
  const size = encoded.byteLength;
  if (size <= largeAnswerBytes) return { body: encoded };
  if (heldBytes + size > answerBudgetBytes) return undefined;
  heldBytes += size;
  let unsent: Uint8Array | undefined = encoded;
  const release = () => {
    if (!unsent) return;
    unsent = undefined;
    heldBytes -= size;
  };
  let offset = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (!unsent) return;
      // A copy: a view would keep the whole answer alive for as long as the socket holds the piece.
      controller.enqueue(unsent.slice(offset, offset + pieceBytes));
      offset += pieceBytes;
      if (offset < size) return;
      controller.close();
      release();
    },
    cancel: release,
    // Nothing is read ahead: a piece leaves the answer only when the server asks for it.
  }, { highWaterMark: 0 });
  return { body, contentLength: String(size) };
}
