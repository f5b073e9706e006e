/** The browser page a provider sign-in leaves and comes back to, and where it keeps its PKCE verifier. */

/**
 * The page a provider sign-in leaves and comes back to, and what it keeps across that round trip. A browser's is
 * `location`, `history` and `sessionStorage` ({@link pageNavigation}); anything else that can show a URL, say where
 * it is, and keep a string until it comes back will do.
 */
export interface BrowserNavigation {
  /** The page's URL now (`location.href`). */
  url(): string;
  /** Leaves the page for `url` (`location.assign(url)`). */
  assign(url: string): void;
  /** Rewrites the page's URL without leaving it or adding to its history (`history.replaceState`). */
  replace(url: string): void;
  /**
   * Keeps the PKCE verifier of the sign-in this page starts until the browser comes back to it (this tab's
   * `sessionStorage`), or forgets it when undefined. Only the page that keeps it can exchange the code.
   */
  saveVerifier(verifier: string | undefined): void;
  /** The verifier {@link saveVerifier} kept, if any. */
  loadVerifier(): string | undefined;
}

/** Where {@link pageNavigation} keeps a sign-in's PKCE verifier in `sessionStorage`. */
const verifierKey = "notes-provider-sign-in-verifier";

/** This tab's `sessionStorage`, or undefined where there is none or it refuses to be used (some private modes). */
function tabStorage(): {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
} | undefined {
  try {
    const storage = (globalThis as { sessionStorage?: Storage }).sessionStorage;
    storage?.getItem(verifierKey);
    return storage;
  } catch {
    return undefined;
  }
}

/** The browser's own page, or undefined where there is none (Node, Deno, a worker). */
export function pageNavigation(): BrowserNavigation | undefined {
  const page = globalThis as unknown as {
    location?: { href: string; assign(url: string): void };
    history?: { state: unknown; replaceState(data: unknown, unused: string, url: string): void };
  };
  let location: typeof page.location;
  try {
    // Deno without --location throws on reading `location`.
    location = page.location;
  } catch {
    return undefined;
  }
  const { history } = page;
  if (!location || typeof location.assign !== "function" || !history) return undefined;
  const storage = tabStorage();
  // Without a usable sessionStorage, the verifier lives as long as this page: enough for a link's href opened here.
  let inMemory: string | undefined;
  return {
    url: () => location.href,
    assign: (url) => location.assign(url),
    replace: (url) => history.replaceState(history.state, "", url),
    saveVerifier: (verifier) => {
      inMemory = verifier;
      if (verifier === undefined) storage?.removeItem(verifierKey);
      else storage?.setItem(verifierKey, verifier);
    },
    loadVerifier: () => storage?.getItem(verifierKey) ?? inMemory,
  };
}
