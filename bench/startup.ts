/**
 * Start-up of each function as it would be deployed: a fresh Deno process
 * running the function's `index.ts` until its first answer to a real request,
 * and until it listens (Deno's start and the function's modules loaded and
 * run), beside a hello-world `Deno.serve` started the same way, which is what
 * Deno itself costs on this machine.
 *
 * @example
 * ```ts
 * const { helloWorld, functions } = await measureColdStarts(env, credentials, 3);
 * ```
 */
import { existsSync } from "node:fs";
import { functionNames, functionsDir } from "../dev/functions.ts";
import { startDeno } from "../dev/processes.ts";
import { median } from "./load.ts";
import { markdownTable } from "./report.ts";

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
  /** Median milliseconds from spawning Deno to its listening: starting Deno, loading and running the modules. */
  listeningMs: number;
  /** Status of the first answer, to show what the probe exercised. */
  status: number;
}

/** What a cold start is compared with: a `Deno.serve` that answers "hello" and loads nothing. */
const helloWorld = new URL("./baseline/hello-world.ts", import.meta.url);
/** The floor of a notes function's: the hello world after loading pg, zod and jose, answering after one query. */
const driverFloorName = "pg, zod and jose, one query";
const driverFloor = new URL("./baseline/driver-floor.ts", import.meta.url);

/** The name a function of the checkout `against` is reported under. */
export const againstName = (name: string) => `${name} (against)`;

/**
 * Every function's cold start, and the hello-world's, each the median of
 * `runs` fresh processes. The runs go round-robin, one start of each per
 * round, so a slow spell of a shared machine touches them all alike. With
 * `against` (another checkout's `supabase/functions/`), each function of that
 * checkout that this one also has starts right after this one's, reported as
 * `againstName(name)`: a before and after in one run.
 */
export async function measureColdStarts(
  env: Record<string, string>,
  credentials: { authorization: string; apiKey: string },
  runs: number,
  against?: URL,
): Promise<{ helloWorld: ColdStart; functions: ColdStart[] }> {
  const names = await functionNames();
  const starter = (name: string, dir: URL, reportedAs = name) => ({
    name: reportedAs,
    probe: probeFor(name, credentials),
    script: new URL(`${name}/index.ts`, dir),
  });
  const starters = [
    { name: "hello-world", probe: { method: "GET", headers: {} }, script: helloWorld },
    { name: driverFloorName, probe: { method: "GET", headers: {} }, script: driverFloor },
    ...names.flatMap((name) => [
      starter(name, functionsDir),
      ...(against && existsSync(new URL(`${name}/index.ts`, against))
        ? [starter(name, against, againstName(name))]
        : []),
    ]),
  ];
  // One untimed start of each fills Deno's transpile cache, as a deployment ships its code ready to run.
  for (const { script, probe } of starters) await startOnce(script, env, probe);
  const samples = starters.map(() => ({ runsMs: [] as number[], listeningRunsMs: [] as number[], status: 0 }));
  for (let run = 0; run < runs; run++) {
    for (const [index, { script, probe }] of starters.entries()) {
      const { ms, listeningMs, status } = await startOnce(script, env, probe);
      samples[index].runsMs.push(ms);
      samples[index].listeningRunsMs.push(listeningMs);
      samples[index].status = status;
    }
  }
  const [hello, ...functions] = starters.map(({ name }, index) => {
    const { runsMs, listeningRunsMs, status } = samples[index];
    return { name, runsMs, status, medianMs: median(runsMs), listeningMs: median(listeningRunsMs) };
  });
  return { helloWorld: hello, functions };
}

/** Starts `script` in a fresh process and times its first answer to `probe`. */
async function startOnce(
  script: URL,
  env: Record<string, string>,
  probe: Probe,
): Promise<{ ms: number; listeningMs: number; status: number }> {
  const started = performance.now();
  // Port 0 lets the OS pick a free port; Deno.serve reads the address from DENO_SERVE_ADDRESS.
  const child = await startDeno(
    script.pathname,
    { ...env, DENO_SERVE_ADDRESS: "tcp:127.0.0.1:0" },
    /Listening on (http:\/\/127\.0\.0\.1:\d+)\//,
  );
  const listeningMs = performance.now() - started;
  try {
    const name = script.pathname.split("/").at(-2);
    const url = `${child.ready[1]}/${name}${probe.subpath ?? ""}${probe.query ?? ""}`;
    const response = await fetch(url, { method: probe.method, headers: probe.headers, body: probe.body });
    await response.arrayBuffer();
    return { ms: performance.now() - started, listeningMs, status: response.status };
  } finally {
    await child.stop();
  }
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

/** The cold starts as a Markdown table, each function also as a multiple of the hello-world's. */
export function coldStartTable({ helloWorld, functions }: { helloWorld: ColdStart; functions: ColdStart[] }): string {
  return markdownTable(
    ["Function", "Cold start ms (median)", "× hello world", "Listening ms (median)", "Runs ms", "First answer"],
    [helloWorld, ...functions].map((start) => [
      start.name,
      start.medianMs.toFixed(0),
      `${(start.medianMs / helloWorld.medianMs).toFixed(1)}×`,
      start.listeningMs.toFixed(0),
      start.runsMs.map((ms) => ms.toFixed(0)).join(", "),
      String(start.status),
    ]),
  );
}
