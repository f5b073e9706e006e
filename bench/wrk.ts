/**
 * Drives one endpoint with wrk, the C load generator, rotating through many users' `authorization` headers: a
 * driver whose own CPU use is near pgbench's, for a comparison with pgbench on a machine whose cores the load
 * generator shares with the stack and Postgres (autocannon, in Node, spends a large part of a core of its own).
 *
 * @example
 * ```ts
 * const { requestsPerSecond } = await runWrk(url, { method: "POST", body, authorizations, connections: 10, seconds: 10 });
 * ```
 */
import { runCommand } from "../dev/processes.ts";

export interface WrkLoad {
  method: "GET" | "POST";
  body?: string;
  /** Sent in turn, one per request. */
  authorizations: readonly string[];
  connections: number;
  seconds: number;
}

export interface WrkResult {
  requestsPerSecond: number;
  /** Answers that were not 2xx or 3xx, and socket errors: any is a failed run. */
  failed: number;
}

/** wrk's Lua script: each request takes the next user's header. */
function script(load: WrkLoad): string {
  const quoted = (text: string) => JSON.stringify(text);
  return [
    `local authorizations = { ${load.authorizations.map(quoted).join(", ")} }`,
    "local next = 0",
    `wrk.method = ${quoted(load.method)}`,
    ...(load.body === undefined ? [] : [
      `wrk.body = ${quoted(load.body)}`,
      `wrk.headers["Content-Type"] = "application/json"`,
    ]),
    "request = function()",
    "  next = next % #authorizations + 1",
    `  wrk.headers["Authorization"] = authorizations[next]`,
    "  return wrk.format()",
    "end",
    "",
  ].join("\n");
}

/** `load` against `url` with one wrk thread; throws when wrk is missing or fails. */
export async function runWrk(url: string, load: WrkLoad): Promise<WrkResult> {
  const file = await Deno.makeTempFile({ suffix: ".lua" });
  try {
    await Deno.writeTextFile(file, script(load));
    const args = ["-t", "1", "-c", String(load.connections), "-d", `${load.seconds}s`, "-s", file, url];
    const result = await runCommand("wrk", args, { cwd: Deno.cwd() });
    if (!result.ok) throw new Error(`wrk failed: ${result.stderr}`);
    const rate = /Requests\/sec:\s+([\d.]+)/.exec(result.stdout);
    if (!rate) throw new Error(`wrk printed no rate: ${result.stdout}`);
    const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(result.stdout)?.[1] ?? 0);
    const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(result.stdout);
    const socketErrors = errors ? errors.slice(1).reduce((sum, count) => sum + Number(count), 0) : 0;
    return { requestsPerSecond: Number(rate[1]), failed: non2xx + socketErrors };
  } finally {
    await Deno.remove(file);
  }
}
