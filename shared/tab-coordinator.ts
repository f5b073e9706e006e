/**
 * Agreement between the clients of several tabs that share one session
 * storage: when their access token runs out at once, one of them refreshes
 * and the others take its result, instead of spending the same refresh token
 * side by side. Built on BroadcastChannel messages, not Web Locks (whose
 * locks outlived crashed tabs and deadlocked supabase-js, supabase-js#936):
 * every tab that wants to refresh a token announces it, waits a moment for
 * the others' announcements, and the lowest tab id wins. A loser that hears
 * nothing back in time refreshes itself, and the server's grace for the
 * token just replaced makes that converge too: the wait counts from the first
 * claim heard, so however late a tab joins, the whole refresh stays within
 * the client's budget (`_shared/contract/refresh-budget.ts`), which the grace covers.
 *
 * @example
 * ```ts
 * const tabs = new TabCoordinator("notes-session:app", (message) => adopt(message));
 * const session = await tabs.refreshOnce(current.refreshToken, () => callRefreshEndpoint());
 * ```
 */
import type { Session } from "../supabase/functions/_shared/contract/mod.ts";
import { tabClaimWindowMs, tabResultWaitMs } from "../supabase/functions/_shared/contract/refresh-budget.ts";

/** What one tab tells the others. */
export type TabMessage =
  | { type: "claim"; token: string; tab: string }
  /** The refresh of `token` succeeded: here is the session that replaces it. */
  | { type: "refreshed"; token: string; session: Session }
  /** The refresh of `token` did not succeed; a waiting tab tries for itself. */
  | { type: "failed"; token: string }
  /** The session whose refresh token is `token` has ended. */
  | { type: "ended"; token: string };

export class TabCoordinator {
  readonly #channel: BroadcastChannel;
  readonly #tab = crypto.randomUUID();
  /** Tabs that claimed the refresh of each token, and when this tab heard the first claim. */
  readonly #claims = new Map<string, { tabs: Set<string>; since: number }>();
  /** Tabs waiting for the winner's result, by token. */
  readonly #waiting = new Map<string, (result: Session | undefined) => void>();
  /** Results heard, by the token they replace, for a loser that starts waiting after the winner finished. */
  readonly #results = new Map<string, Session>();

  constructor(name: string, onMessage: (message: TabMessage) => void) {
    this.#channel = new BroadcastChannel(name);
    this.#channel.onmessage = (event: MessageEvent<TabMessage>) => {
      const message = event.data;
      if (message.type === "claim") {
        this.#claimOf(message.token).tabs.add(message.tab);
        return;
      }
      this.#claims.delete(message.token);
      const result = message.type === "refreshed" ? message.session : undefined;
      // Only the latest matters: an older token is never refreshed again.
      if (result) {
        this.#results.clear();
        this.#results.set(message.token, result);
      }
      this.#waiting.get(message.token)?.(result);
      onMessage(message);
    };
  }

  /** Tells the other tabs, e.g. that a session ended. */
  announce(message: TabMessage): void {
    this.#channel.postMessage(message);
  }

  /**
   * Refreshes `token` once across the tabs: answers the session that replaces
   * it, whichever tab made it. `refresh` runs in this tab when it wins the
   * claim, or when the winner does not report a result.
   */
  async refreshOnce(
    token: string,
    refresh: () => Promise<Session>,
  ): Promise<Session> {
    const claim = this.#claimOf(token);
    claim.tabs.add(this.#tab);
    this.announce({ type: "claim", token, tab: this.#tab });
    await new Promise((resolve) => setTimeout(resolve, tabClaimWindowMs));
    const winner = [...this.#claimOf(token).tabs].sort()[0];
    if (winner !== this.#tab) {
      const result = await this.#resultOf(token, claim.since + tabResultWaitMs);
      if (result) return result;
    }
    try {
      const session = await refresh();
      this.announce({ type: "refreshed", token, session });
      return session;
    } catch (error) {
      this.announce({ type: "failed", token });
      throw error;
    } finally {
      this.#claims.delete(token);
    }
  }

  close(): void {
    this.#channel.close();
  }

  #claimOf(token: string): { tabs: Set<string>; since: number } {
    let claim = this.#claims.get(token);
    if (!claim) this.#claims.set(token, claim = { tabs: new Set(), since: Date.now() });
    return claim;
  }

  /** The winner's session, or undefined when it failed or had not answered by `until` (a `Date.now()`). */
  #resultOf(token: string, until: number): Promise<Session | undefined> {
    const heard = this.#results.get(token);
    if (heard) return Promise.resolve(heard);
    return new Promise((resolve) => {
      const timer = setTimeout(() => settle(undefined), Math.max(0, until - Date.now()));
      const settle = (result: Session | undefined) => {
        clearTimeout(timer);
        this.#waiting.delete(token);
        resolve(result);
      };
      this.#waiting.set(token, settle);
    });
  }
}
