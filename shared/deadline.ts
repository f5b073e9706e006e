/**
 * The deadline of one call of the typed client: a signal that aborts when the
 * call's time is up or when the caller's own signal aborts, and the
 * `NotesApiError` that says which. One deadline covers everything a call
 * does (a refresh of the session, a retry), so none of that can make the
 * call outlast it.
 *
 * @example
 * ```ts
 * const deadline = new CallDeadline(15_000, callerSignal);
 * const response = await deadline.race(fetch(url, { signal: deadline.signal }));
 * ```
 */
import { NotesApiError } from "./errors.ts";

/** What a call waits for an answer by default: a cold start of a function and a slow network fit well within it. */
export const defaultTimeoutMs = 15_000;

export class CallDeadline {
  /** Aborts when the time is up (reason: a `TimeoutError`) or with the caller's signal (its reason). */
  readonly signal: AbortSignal;
  readonly timeoutMs: number;

  constructor(timeoutMs: number, callerSignal?: AbortSignal) {
    this.timeoutMs = timeoutMs;
    // AbortSignal.timeout: every current runtime; its timer does not keep Node alive. AbortSignal.any, needed only
    // with a caller's signal: Node 20.3, Deno, Chrome 116, Firefox 124, Safari 17.4.
    const timeout = AbortSignal.timeout(timeoutMs);
    this.signal = callerSignal ? AbortSignal.any([timeout, callerSignal]) : timeout;
  }

  /** The error of a call stopped by this deadline: status 0, code `timeout`, or `aborted` when the caller aborted it. */
  error(): NotesApiError {
    const reason: unknown = this.signal.reason;
    const timedOut = reason instanceof DOMException && reason.name === "TimeoutError";
    return new NotesApiError({
      status: 0,
      code: timedOut ? "timeout" : "aborted",
      message: timedOut ? `The notes service did not answer within ${this.timeoutMs} ms` : "The call was aborted",
      cause: reason,
    });
  }

  /**
   * What `work` answers, unless the deadline passes first: then it rejects at
   * once with {@link error}, whether or not `work` heeds the signal (an app's
   * own fetch may not; a refresh shared with other calls runs on).
   */
  race<T>(work: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const stop = () => reject(this.error());
      if (this.signal.aborted) stop();
      else this.signal.addEventListener("abort", stop, { once: true });
      // Settling after `stop` changes nothing, but a rejection of `work` is still handled, never left unhandled.
      work.then(resolve, reject).finally(() => this.signal.removeEventListener("abort", stop));
    });
  }
}
