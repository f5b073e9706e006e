/**
 * The local stack's console: each line is queued and the queue is written
 * every few milliseconds in one write, off the request path. Deno's own
 * console writes every line to stdout synchronously while the request that
 * logged it waits. Supabase's edge runtime does not: there a function's
 * console line is handed to a channel (`op_user_worker_log`) and written
 * elsewhere, so the local stack, which stands in for that runtime, keeps the
 * write off the request path too. Each `console.*` call is still one line.
 *
 * @example
 * ```ts
 * batchConsoleOutput(); // first thing in the stack's main
 * ```
 */

const flushIntervalMs = 10;

/**
 * Replaces `console.log`/`info`/`debug` (stdout) and `warn`/`error` (stderr).
 * What is queued is written on `unload`, which `Deno.exit` dispatches too.
 */
export function batchConsoleOutput(): void {
  const encoder = new TextEncoder();
  const queues = [
    { stream: Deno.stdout, lines: [] as string[] },
    { stream: Deno.stderr, lines: [] as string[] },
  ];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    for (const queue of queues) {
      if (queue.lines.length === 0) continue;
      writeAll(queue.stream, encoder.encode(queue.lines.join("")));
      queue.lines.length = 0;
    }
  };
  const writerTo = (lines: string[]) => (...args: unknown[]) => {
    lines.push(`${args.map((arg) => typeof arg === "string" ? arg : Deno.inspect(arg)).join(" ")}\n`);
    timer ??= setTimeout(flush, flushIntervalMs);
  };
  console.log = console.info = console.debug = writerTo(queues[0].lines);
  console.warn = console.error = writerTo(queues[1].lines);
  globalThis.addEventListener("unload", flush);
}

function writeAll(stream: { writeSync(bytes: Uint8Array): number }, bytes: Uint8Array): void {
  for (let written = 0; written < bytes.length;) written += stream.writeSync(bytes.subarray(written));
}
