/**
 * `npm run demo`: serves the demo app on its own port (Vite picks 5173 or the
 * next free one) and starts the local stack beside it, unless NOTES_URL and
 * NOTES_ANON_KEY name functions that already run.
 */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";
import { notesStack } from "./stack-plugin.ts";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  plugins: [notesStack()],
  server: { host: "127.0.0.1" },
});
