/**
 * What live update streams may read and hold: how large a batch a stream
 * reads, bounded by what the isolate's reads under way already count on, and each
 * batch's share of the isolate's answer budget (`http/answer-budget.ts`)
 * until its client has taken it.
 *
 * @example
 * ```ts
 * const batch = reserveBatch(caller.sub);
 * try {
 *   if (batch.limit > 0) page = await readChangesPage(caller, position, batch.limit);
 * } finally {
 *   batch.release();
 * }
 * ```
 */
import { limits } from "../contract/common.ts";
import { reconnectAfter } from "../http/event-stream.ts";
import { type AnswerBody, answerBudgetBytes, answerBudgetRoom, budgetedBody } from "../http/answer-budget.ts";

/**
 * Changes read per round trip while catching up: a tenth of the feed's largest page, so a batch of the largest
 * notes (3 MB at most) is what one stream holds while it waits for its client. With whole pages, 150 streams that
 * never read held 380 MB past the stack's idle memory (tests/load/slow-readers.load.ts bounds it at 300 MB).
 */
const batchSize = limits.changesLimitMax / 10;
/**
 * The most one change's event can take: a character of a title or content is at most 6 bytes of JSON (a control
 * character is written `\u00XX`; any other takes 3 bytes of UTF-8 at most), plus the event's other fields.
 */
const largestChangeBytes = 6 * (limits.titleMaxChars + limits.contentMaxChars) + 1_024;
/**
 * The share of the isolate's answer budget that one account's streams may hold at once: a quarter, so one
 * account that opens streams and never reads them cannot take the room other accounts' large batches need.
 */
const ownerShareBytes = answerBudgetBytes / 4;
/**
 * Reads under way at once in the isolate, counted at the largest their changes can be: the answer budget bounds what
 * is held for clients, not what is being read. Without it, streams that open together from an old cursor each read a
 * full batch at once, most of which the budget then refuses to hold; past it, a stream reads one change.
 */
const readingBudgetBytes = answerBudgetBytes / 4;
/** The reconnect delay when the isolate holds too many unsent answers: time for their clients to take them. */
export const busyRetryMs = 5_000;

/** Budget held by each account's streams: batches sent to clients that have not taken them yet. */
const heldByOwner = new Map<string, number>();
/** What each account's streams are reading now, counted at the largest a change can be. */
const readingByOwner = new Map<string, number>();
/** What every stream of the isolate is reading now, counted the same way. */
let readingTotal = 0;

const encoder = new TextEncoder();

/** A batch a stream may read: how many changes (0: none, end with a retry hint), and its release once read. */
export interface BatchReservation {
  limit: number;
  release: () => void;
}

/**
 * How many changes a stream of `owner` may read now, and that many changes
 * of the largest size counted as being read (for the owner and the isolate)
 * until `release` (once the batch is read), so streams that read at once do
 * not all count on the same room:
 *
 * - none once the account's unread batches fill its share: that stream ends
 *   with a retry hint and reads nothing;
 * - else no more than the rest of the share, less what its other streams are
 *   reading, could hold if each change were as large as a change can be, and
 *   no more than the isolate's answer budget, or what is left of the room for
 *   reads under way, could; but at least one, since a batch of small notes
 *   never draws on the budget, so neither what other accounts hold in it nor
 *   the streams reading at once can stop a stream (a large one that then finds
 *   no room ends with a retry hint).
 */
export function reserveBatch(owner: string): BatchReservation {
  const held = heldByOwner.get(owner) ?? 0;
  const reading = readingByOwner.get(owner) ?? 0;
  const byShare = Math.floor((ownerShareBytes - held - reading) / largestChangeBytes);
  const byBudget = Math.floor(answerBudgetRoom() / largestChangeBytes);
  const byReading = Math.floor((readingBudgetBytes - readingTotal) / largestChangeBytes);
  const limit = held + largestChangeBytes > ownerShareBytes
    ? 0
    : Math.max(1, Math.min(batchSize, byShare, byBudget, byReading));
  const reserved = limit * largestChangeBytes;
  addTo(readingByOwner, owner, reserved);
  readingTotal += reserved;
  let released = false;
  return {
    limit,
    release: () => {
      if (released) return;
      released = true;
      addTo(readingByOwner, owner, -reserved);
      readingTotal -= reserved;
    },
  };
}

/** Adds `bytes` (or takes them away, when negative) to what `counts` holds for `owner`. */
function addTo(counts: Map<string, number>, owner: string, bytes: number): void {
  const total = (counts.get(owner) ?? 0) + bytes;
  if (total > 0) counts.set(owner, total);
  else counts.delete(owner);
}

/**
 * The stream's texts, as `nextText` gives them until it gives undefined, as
 * pieces of its body, each held against the isolate's answer budget and its
 * owner's share of it until the client has taken it, as the notes' other
 * large answers are: a batch of catch-up can be 3 MB, which clients that open
 * streams and never read would otherwise each hold. Only the budgeted copy of
 * a text is kept while its client takes it. Small texts (under 64 KB) never
 * wait on the budget. When it has no room, the stream ends with a reconnect
 * hint, and the client resumes from the last event it took.
 */
export async function* budgetedPieces(
  owner: string,
  nextText: () => Promise<string | undefined>,
): AsyncGenerator<Uint8Array> {
  for (;;) {
    const answer = budgetOf(await nextText());
    if (answer === "ended") return;
    if (answer === "no room") return yield encoder.encode(reconnectAfter(busyRetryMs));
    const held = Number(answer.contentLength ?? 0);
    addTo(heldByOwner, owner, held);
    try {
      yield* piecesOf(answer.body);
    } finally {
      addTo(heldByOwner, owner, -held);
    }
  }
}

/**
 * A text's budgeted body. A function of its own so that no frame that waits
 * on the client keeps the text as well: a stream that never reads would hold
 * it beside its budgeted copy, unbudgeted.
 */
function budgetOf(text: string | undefined): AnswerBody | "no room" | "ended" {
  if (text === undefined) return "ended";
  return budgetedBody(text) ?? "no room";
}

/** The pieces of a budgeted body; one left unread gives back its share of the budget. */
async function* piecesOf(body: AnswerBody["body"]): AsyncGenerator<Uint8Array> {
  if (typeof body === "string") return yield encoder.encode(body);
  if (body instanceof Uint8Array) return yield body;
  const reader = (body as ReadableStream<Uint8Array>).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel();
  }
}
