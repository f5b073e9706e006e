/**
 * What a live update stream waits on between reads: a flag that change
 * notices raise, so notices that come while it reads are not lost.
 *
 * @example
 * ```ts
 * const waker = new Waker();
 * const stop = watchChanges(owner, () => waker.wake());
 * const woken = await waker.wait(15_000, ended.signal);
 * ```
 */

/** A flag that notices raise and a stream waits on. */
export class Waker {
  #raised = false;
  #waiting: (() => void) | undefined;

  wake(): void {
    this.#raised = true;
    this.#waiting?.();
  }

  /** True when woken (now or already), false after `ms` or when `signal` aborts; lowers the flag. */
  async wait(ms: number, signal: AbortSignal): Promise<boolean> {
    if (!this.#raised && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          signal.removeEventListener("abort", done);
          resolve();
        }
        this.#waiting = done;
        signal.addEventListener("abort", done);
      });
      this.#waiting = undefined;
    }
    const woken = this.#raised;
    this.#raised = false;
    return woken;
  }
}
