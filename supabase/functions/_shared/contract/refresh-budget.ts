/**
 * How long the typed client may spend refreshing one session, and the
 * server's grace that covers it: the numbers both sides and docs/sessions.md
 * agree on. A refresh whose answer is lost has already rotated the token, so
 * the client's retry presents the replaced one, which the server answers with
 * the same successor only within `SESSION_REFRESH_GRACE_SECONDS` of the
 * rotation; after that it is taken for a stolen copy and the session ends.
 * So every request a client makes with one refresh token (its tabs' turns,
 * each request's timeout and the retry included) falls within the grace.
 *
 * @example
 * ```ts
 * const deadline = new CallDeadline(Math.min(refreshAttemptMs, timeoutMs / refreshAttempts));
 * ```
 */

/** How long one refresh request may go unanswered before the client counts its answer lost and retries. */
export const refreshAttemptMs = 5_000;

/** Requests per refresh: the first, and one retry when its answer was lost (never after an answer). */
export const refreshAttempts = 2;

/** How long a tab listens for other tabs' claims to the same refresh before it counts them. */
export const tabClaimWindowMs = 60;

/**
 * How long, from the first claim it heard, a tab waits for the winning tab's
 * result before it refreshes itself: the winner's every request, and a second
 * for its message.
 */
export const tabResultWaitMs = refreshAttempts * refreshAttemptMs + 1_000;

/**
 * The longest a client takes from its first claim of a refresh token to the
 * last moment one of its requests with that token may reach the server: the
 * claim window, the wait for another tab, then its own requests (21.06 s).
 */
export const clientRefreshBudgetMs = tabClaimWindowMs + tabResultWaitMs + refreshAttempts * refreshAttemptMs;

/**
 * `SESSION_REFRESH_GRACE_SECONDS` when unset: the client's budget with room
 * to spare for a request in transit; a replaced token later than this ends
 * the session.
 */
export const defaultRefreshGraceSeconds = 30;
