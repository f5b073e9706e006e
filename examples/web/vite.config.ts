/**
 * `npm run demo`: serves the demo app on its own port (Vite picks 5173 or the
 * next free one) against the functions NOTES_URL and NOTES_ANON_KEY name, else
 * the stack already running on PORT's port (54321 by default), else a stack it
 * starts beside it (stack-plugin.ts).
 */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";
import { notesStack } from "./stack-plugin.ts";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  plugins: [notesStack()],
  server: { host: "127.0.0.1" },
});
