/**
 * Serves the demo app (examples/web) with Vite on a free port, pointed at this
 * run's stack, for the browser tests.
 *
 * @example
 * ```ts
 * const app = await serveDemoApp(inject("baseUrl"), anonKey);
 * await page.goto(app.signInUrl); // or app.url, to land as a new visitor
 * ```
 */
import { createServer as createNetServer } from "node:net";
import { fileURLToPath } from "node:url";
import { createServer } from "vite";

/** A port free on 127.0.0.1 at the moment of asking. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Starts the app's dev server against the functions at `functionsUrl`, on `options.port` (a free one by default),
 * offering the sign-in providers `options.providers` names (comma-separated; none by default).
 */
export async function serveDemoApp(
  functionsUrl: string,
  anonKey: string,
  options: { port?: number; providers?: string } = {},
) {
  // The plugin of vite.config.ts reads these and starts no stack of its own.
  process.env.NOTES_URL = functionsUrl;
  process.env.NOTES_ANON_KEY = anonKey;
  process.env.NOTES_PROVIDERS = options.providers ?? "";
  const port = options.port ?? await freePort();
  const server = await createServer({
    configFile: fileURLToPath(new URL("../../examples/web/vite.config.ts", import.meta.url)),
    server: { port, strictPort: true },
    logLevel: "warn",
  });
  await server.listen();
  const url = `http://127.0.0.1:${port}/`;
  // A new visitor at `url` writes at once on an anonymous account; `signInUrl` shows the sign-in page instead.
  return { url, signInUrl: `${url}#sign-in`, close: () => server.close() };
}
