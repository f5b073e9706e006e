/**
 * A Vite plugin for `npm run demo`: unless NOTES_URL names running functions,
 * it starts the local stack (`dev/stack.ts`, as `npm start` does, its log
 * shown in the terminal so reset codes can be read there) and hands the app
 * the stack's base URL and apikey.
 *
 * @example
 * ```ts
 * export default defineConfig({ plugins: [notesStack()] });
 * ```
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Plugin } from "vite";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

interface Functions {
  url: string;
  anonKey: string;
}

/** Starts `dev/stack.ts` and resolves with its base URL and apikey once it is ready. */
function startStack(): Promise<{ functions: Functions; child: ChildProcess }> {
  const child = spawn("deno", ["run", "--allow-all", "dev/stack.ts"], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let output = "";
    const onData = (chunk: Buffer, to: NodeJS.WriteStream) => {
      to.write(chunk);
      output += chunk.toString();
      const url = /Ready on (\S+)/.exec(output)?.[1];
      const anonKey = /apikey:\s+(\S+)/.exec(output)?.[1];
      if (url && anonKey) resolve({ functions: { url, anonKey }, child });
    };
    child.stdout?.on("data", (chunk: Buffer) => onData(chunk, process.stdout));
    child.stderr?.on("data", (chunk: Buffer) => onData(chunk, process.stderr));
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`the stack exited with ${code} before it was ready`)));
  });
}

/** Provides `import.meta.env.VITE_NOTES_URL` and `VITE_NOTES_ANON_KEY`, starting a stack when none is named. */
export function notesStack(): Plugin {
  let child: ChildProcess | undefined;
  let functions: Functions | undefined;
  return {
    name: "notes-stack",
    async config(_config, { command }) {
      const given = process.env.NOTES_URL;
      if (given) {
        functions = { url: given, anonKey: process.env.NOTES_ANON_KEY ?? "" };
      } else if (command === "serve") {
        ({ functions, child } = await startStack());
      } else {
        throw new Error("Set NOTES_URL and NOTES_ANON_KEY to build the demo for a deployed project");
      }
      return {
        define: {
          "import.meta.env.VITE_NOTES_URL": JSON.stringify(functions.url),
          "import.meta.env.VITE_NOTES_ANON_KEY": JSON.stringify(functions.anonKey),
        },
      };
    },
    configureServer(server) {
      server.httpServer?.once("listening", () => {
        if (functions) server.config.logger.info(`  API reference: ${new URL(functions.url).origin}/docs`);
      });
      server.httpServer?.once("close", () => child?.kill("SIGTERM"));
    },
  };
}
