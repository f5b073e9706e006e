/**
 * Start-up of each function as it would be deployed: a fresh Deno process
 * running the function's `index.ts` until its first answer to a real request.
 *
 * @example
 * ```ts
 * const names = await functionNames();
 * const startup = await coldStart("notes-fetch", env, probeFor("notes-fetch", fixtures));
 * ```
 */
import { functionsDir } from "../dev/functions.ts";
import { startDeno } from "../dev/processes.ts";
import { median } from "./load.ts";

/** The first request a cold function answers: its own method, path and credentials. */
export interface Probe {
  method: string;
  /** Below the function's own path, e.g. `/login` for the auth router. */
  subpath?: string;
  query?: string;
  headers: Record<string, string>;
  body?: string;
}

/** One function's start-up figures. */
export interface ColdStart {
  name: string;
  /** Milliseconds from spawning Deno to the first response, each run a fresh process. */
  runsMs: number[];
  medianMs: number;
  /** Status of the first answer, to show what the probe exercised. */
  status: number;
}

/** Starts the function `runs` times, each a fresh process, and times its first answer. */
export async function coldStart(
  name: string,
  env: Record<string, string>,
  probe: Probe,
  runs: number,
): Promise<ColdStart> {
  const runsMs: number[] = [];
  let status = 0;
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    // Port 0 lets the OS pick a free port; Deno.serve reads the address from DENO_SERVE_ADDRESS.
    const child = await startDeno(
      new URL(`${name}/index.ts`, functionsDir).pathname,
      { ...env, DENO_SERVE_ADDRESS: "tcp:127.0.0.1:0" },
      /Listening on (http:\/\/127\.0\.0\.1:\d+)\//,
    );
    try {
      const url = `${child.ready[1]}/${name}${probe.subpath ?? ""}${probe.query ?? ""}`;
      const response = await fetch(url, { method: probe.method, headers: probe.headers, body: probe.body });
      await response.arrayBuffer();
      runsMs.push(performance.now() - started);
      status = response.status;
    } finally {
      await child.stop();
    }
  }
  return { name, runsMs, medianMs: median(runsMs), status };
}

/**
 * The probe for each function. Notes functions get an authorized request that
 * runs their SQL (saving or deleting a note that does not exist answers 404
 * after the caller's transaction); auth functions get their `apikey` and an
 * empty body, answered by validation, so bcrypt's deliberate slowness is not
 * counted as start-up.
 */
export function probeFor(name: string, credentials: { authorization: string; apiKey: string }): Probe {
  const json = { "content-type": "application/json" };
  const authorized = { authorization: credentials.authorization };
  const missingNote = crypto.randomUUID();
  switch (name) {
    case "notes-fetch":
      return { method: "GET", query: "?limit=10&offset=0", headers: authorized };
    case "notes-create":
      return { method: "POST", headers: { ...authorized, ...json }, body: JSON.stringify({ title: "Cold start" }) };
    case "notes-save":
      return {
        method: "POST",
        headers: { ...authorized, ...json },
        body: JSON.stringify({ id: missingNote, title: "Cold start" }),
      };
    case "notes-delete":
      return { method: "DELETE", query: `?id=${missingNote}`, headers: authorized };
    default:
      return {
        method: "POST",
        // The auth router serves the interface's paths; login stands for all of them.
        subpath: name === "auth" ? "/login" : undefined,
        headers: { apikey: credentials.apiKey, ...json },
        body: "{}",
      };
  }
}
