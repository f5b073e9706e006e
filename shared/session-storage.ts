/**
 * Where the typed client keeps its session (`accessToken`, `refreshToken`,
 * `expiresAt` and the user). The storage is the one source of truth: the
 * client reads it on every call, so tabs that share a storage share one
 * session, and a refresh or a sign-out in one tab is seen by the others.
 *
 * What each exposes: `memorySessionStorage` keeps the session in this page's
 * memory only (gone on reload; out of reach of other tabs, but not of a script
 * injected into this page). `localSessionStorage` survives reloads and is
 * shared by every tab of the origin; any script that runs on the origin (an
 * XSS) can read it and take the refresh token away. `tabSessionStorage`
 * (sessionStorage) survives reloads of one tab only, and is just as readable
 * by a script on the page.
 *
 * @example
 * ```ts
 * const client = createNotesClient({ url, anonKey, storage: localSessionStorage() });
 * ```
 */
import { type Session, session as sessionSchema } from "../supabase/functions/_shared/contract/mod.ts";

/** A place to keep the session; `load` answers undefined when none is kept (or it is not a session). */
export interface SessionStorage {
  load(): Session | undefined;
  save(session: Session | undefined): void;
  /**
   * This device's token, kept across sign-outs: logins send it, so an
   * account refusing logins after many failed guesses still admits this device.
   */
  loadDeviceToken(): string | undefined;
  saveDeviceToken(token: string): void;
  /**
   * Set when several tabs share this storage: the name of the BroadcastChannel
   * on which their clients agree which one refreshes, and announce sign-outs.
   */
  readonly sharedBy?: string;
}

/** Keeps the session in memory: the default. */
export function memorySessionStorage(): SessionStorage {
  let kept: Session | undefined;
  let deviceToken: string | undefined;
  return {
    load: () => kept,
    save: (session) => {
      kept = session;
    },
    loadDeviceToken: () => deviceToken,
    saveDeviceToken: (token) => {
      deviceToken = token;
    },
  };
}

/** A Web Storage area as a session storage, under `key`. */
function webStorage(
  area: Storage,
  key: string,
  sharedBy?: string,
): SessionStorage {
  return {
    load() {
      const text = area.getItem(key);
      if (!text) return undefined;
      try {
        const parsed = sessionSchema.safeParse(JSON.parse(text));
        return parsed.success ? parsed.data : undefined;
      } catch {
        return undefined;
      }
    },
    save(session) {
      if (session) area.setItem(key, JSON.stringify(session));
      else area.removeItem(key);
    },
    loadDeviceToken: () => area.getItem(`${key}:device`) ?? undefined,
    saveDeviceToken: (token) => area.setItem(`${key}:device`, token),
    sharedBy,
  };
}

/** Keeps the session in `localStorage`: it survives reloads and every tab of the origin shares it. */
export function localSessionStorage(key = "notes-session"): SessionStorage {
  return webStorage(globalThis.localStorage, key, `notes-session:${key}`);
}

/** Keeps the session in `sessionStorage`: it survives reloads of this tab only. */
export function tabSessionStorage(key = "notes-session"): SessionStorage {
  return webStorage(globalThis.sessionStorage, key);
}
