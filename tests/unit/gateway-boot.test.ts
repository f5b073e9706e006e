/**
 * The local gateway loads a function on its first request, as Supabase's relay boots a function's worker: nothing
 * is imported at start, and a function whose module throws while loading answers 503 `BOOT_ERROR` over HTTP and
 * logs why, while the others go on serving.
 */
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const gateway = new URL("../../dev/gateway.ts", import.meta.url).href;
const boundedServer = new URL("../../dev/bounded-server.ts", import.meta.url).href;

describe("the local gateway's functions", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "gateway-functions-"));
    await mkdir(join(dir, "fine"));
    await writeFile(
      join(dir, "fine", "handler.ts"),
      'globalThis.fineLoaded = true;\nexport const handler = () => Promise.resolve(new Response("fine"));\n',
    );
    await mkdir(join(dir, "broken"));
    await writeFile(join(dir, "broken", "handler.ts"), 'throw new Error("broken at load");\n');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("are imported on their first request, and one that cannot load answers 503 BOOT_ERROR beside the others", () => {
    // Served as the stack serves them, through the gateway on the stack's HTTP server, and asked over HTTP.
    const script = `
      import { createGateway, functionHandlers } from ${JSON.stringify(gateway)};
      import { serveBounded } from ${JSON.stringify(boundedServer)};
      const handlers = await functionHandlers(new URL(${JSON.stringify(pathToFileURL(`${dir}/`).href)}));
      const server = await serveBounded(createGateway(handlers, () => undefined), {
        hostname: "127.0.0.1", port: 0, headersTimeoutMs: 5000, requestTimeoutMs: 5000, keepAliveTimeoutMs: 5000,
        maxConnections: 10, sendStallTimeoutMs: 5000,
      });
      // Time for an import started at start, awaited or not, to have run.
      await new Promise((done) => setTimeout(done, 200));
      console.log(JSON.stringify({ names: [...handlers.keys()], loadedAtStart: globalThis.fineLoaded === true }));
      for (const name of ["broken", "fine", "broken"]) {
        const response = await fetch("http://127.0.0.1:" + server.port + "/functions/v1/" + name);
        console.log(JSON.stringify({ name, status: response.status, body: await response.text() }));
      }
      await server.close();`;
    const run = spawnSync("deno", ["eval", "--ext=ts", script], { encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    const [start, ...answers] = run.stdout.trim().split("\n").map((line) => JSON.parse(line));
    expect(start).toEqual({ names: ["broken", "fine"], loadedAtStart: false });
    const bootError = {
      status: 503,
      body: JSON.stringify({ code: "BOOT_ERROR", message: "Worker failed to boot (please check logs)" }),
    };
    expect(answers).toEqual([
      { name: "broken", ...bootError },
      { name: "fine", status: 200, body: "fine" },
      { name: "broken", ...bootError },
    ]);
    const logged = run.stderr.trim().split("\n").map((line) => JSON.parse(line));
    expect(logged).toEqual([
      { level: "error", function: "broken", event: "boot failed", error: "Error: broken at load" },
    ]);
  }, 30_000);
});
