/**
 * Keeps the signed-in session across page reloads in sessionStorage, so a tab
 * stays signed in until it is closed or the user logs out.
 *
 * @example
 * ```ts
 * saveSession(await client.login(credentials));
 * const session = loadSession();
 * ```
 */
import { type Session, session as sessionSchema } from "../../../shared/index.ts";

const key = "notes-demo-session";

/** The saved session, if one is saved and still has the contract's shape. */
export function loadSession(): Session | undefined {
  const text = sessionStorage.getItem(key);
  if (!text) return undefined;
  const parsed = sessionSchema.safeParse(JSON.parse(text));
  return parsed.success ? parsed.data : undefined;
}

/** Saves `session`, or forgets the saved one when undefined. */
export function saveSession(session: Session | undefined): void {
  if (session) sessionStorage.setItem(key, JSON.stringify(session));
  else sessionStorage.removeItem(key);
}
