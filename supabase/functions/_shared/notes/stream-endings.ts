/**
 * How a live update stream ends: when its time is planned to be up, and the
 * last word it sends, a reconnect hint or a `reset`.
 *
 * @example
 * ```ts
 * const endsAt = plannedStreamEnd(getConfig().streams.maxSeconds, caller.exp);
 * ```
 */
import type { StreamReset } from "../contract/notes.ts";
import { CursorExpiredError, HttpError } from "../http/errors.ts";
import { reconnectAfter, serverEvent } from "../http/event-stream.ts";

/** The reconnect delay a planned end asks for: soon, since nothing is lost meanwhile. */
export const plannedEndRetryMs = 1_000;
/** The reconnect delay after a read failed (the database unreachable): time for it to come back. */
const failedReadRetryMs = 5_000;
/**
 * The share of `STREAM_MAX_SECONDS` by which a stream's planned end comes early, at random: streams opened together
 * (a deploy, a network that came back) end spread over this share of it, so their clients do not reconnect in one wave.
 */
const endJitter = 0.1;

/**
 * When a stream opened now ends (`performance.now()` time): after
 * `maxSeconds`, less a random part of `endJitter` of it, and no later than
 * `expiresAt` (seconds since the epoch), when its access token expires.
 */
export function plannedStreamEnd(maxSeconds: number, expiresAt: number): number {
  const plannedMs = maxSeconds * 1_000 * (1 - endJitter * Math.random());
  return performance.now() + Math.min(plannedMs, expiresAt * 1_000 - Date.now());
}

/**
 * The last word of a stream whose read failed: none for a caller that may no
 * longer read (a session ended, an account suspended), who finds out on
 * reconnecting, from its 401 or 403; a reconnect hint for anything else (the
 * database unreachable), which is worth a retry later.
 */
export function lastWordAfterFailedRead(error: unknown): string | undefined {
  // The sequence no longer reaches back to the stream's position: the database was restored from a backup.
  if (error instanceof CursorExpiredError) return resetEvent();
  if (error instanceof HttpError && error.code !== "service_unavailable") return undefined;
  if (!(error instanceof HttpError)) {
    console.error(JSON.stringify({ level: "error", event: "change stream read failed", error: String(error) }));
  }
  return reconnectAfter(failedReadRetryMs);
}

/** The event that tells the client its cursor is no longer covered; the stream ends after it. */
export function resetEvent(): string {
  const reset: StreamReset = {
    code: "cursor_expired",
    message: "The cursor is older than the deletions kept; sync again from /notes-changes without since",
  };
  return serverEvent({ event: "reset", data: reset });
}
