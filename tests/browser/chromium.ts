/**
 * Headless Chromium for the browser tests: the system's own build (Debian's
 * `chromium` package), found on PATH or named by CHROMIUM_PATH; never a
 * downloaded one.
 *
 * @example
 * ```ts
 * const browser = await launchChromium();
 * ```
 */
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { type Browser, chromium } from "playwright-core";

const names = ["chromium", "chromium-browser"];

/** The Chromium executable: CHROMIUM_PATH, else the first `chromium` on PATH. */
export function findChromium(): string {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    for (const name of names) {
      const candidate = join(dir, name);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // not here; keep looking
      }
    }
  }
  throw new Error("No Chromium found: install Debian's `chromium` package or set CHROMIUM_PATH");
}

/** Launches headless Chromium with nothing that reaches out to the network on its own. */
export function launchChromium(): Promise<Browser> {
  // Playwright gives each launch a fresh, temporary profile (user data dir).
  return chromium.launch({
    executablePath: findChromium(),
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
