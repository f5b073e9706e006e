/**
 * Child processes of the scripts and the bench. `startDeno` keeps one
 * running (the bench's floor server, functions booted alone for their cold
 * start or the deploy check): spawned with the running Deno binary, ready once
 * its output says so, and drained afterwards so a chatty child never blocks on
 * a full pipe. `runCommand` runs one to completion and answers what it printed.
 *
 * @example
 * ```ts
 * const child = await startDeno("bench/baseline/server.ts", env, /Ready on (\S+)/);
 * await child.stop();
 * ```
 */

/** A running child and what its ready line matched. */
export interface DenoChild {
  ready: RegExpExecArray;
  /** Its process id, to read its CPU time. */
  pid: number;
  /** The last part of what it printed, for error messages. */
  output(): string;
  stop(): Promise<void>;
}

const keptOutputChars = 16_384;

/** How a child is run besides its script and environment. */
export interface DenoRunOptions {
  /** Flags of `deno run` before the script; all permissions by default. */
  flags?: string[];
  cwd?: string;
  timeoutMs?: number;
}

/** Runs `deno run <flags> <script>` with `env` added and waits until its output matches `ready`. */
export async function startDeno(
  script: string,
  env: Record<string, string>,
  ready: RegExp,
  { flags = ["--allow-all"], cwd, timeoutMs = 60_000 }: DenoRunOptions = {},
): Promise<DenoChild> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, script],
    cwd,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let output = "";
  let onOutput = () => {};
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      output = (output + text).slice(-keptOutputChars);
      onOutput();
    }
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch {
      // It has exited already.
    }
    await child.status;
    await drained;
  };
  try {
    const match = await new Promise<RegExpExecArray>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${script} was not ready in time:\n${output}`)), timeoutMs);
      onOutput = () => {
        const found = ready.exec(output);
        if (found) {
          clearTimeout(timer);
          resolve(found);
        }
      };
      child.status.then((status) => {
        clearTimeout(timer);
        reject(new Error(`${script} exited with ${status.code}:\n${output}`));
      });
    });
    onOutput = () => {};
    return { ready: match, pid: child.pid, output: () => output, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** What a command that ran to completion printed, and whether it succeeded. */
export interface CommandResult {
  ok: boolean;
  stdout: string;
  stderr: string;
}

/** Runs `command` with `args` to completion, with no input, and answers its output. */
export async function runCommand(
  command: string,
  args: string[],
  options: { cwd: string | URL; env?: Record<string, string> },
): Promise<CommandResult> {
  const output = await new Deno.Command(command, { args, ...options, stdin: "null" }).output();
  const decoder = new TextDecoder();
  return { ok: output.success, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}
