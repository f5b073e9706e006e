/**
 * Where a Deno process spends its CPU under a load: a sampling profile taken through its inspector (the process runs
 * with `--inspect=127.0.0.1:<port>`; the Chrome DevTools protocol's `Profiler` domain), summed two ways. By module:
 * the self time of the code of each of this repository's folders, each npm package, Deno's runtime and V8's own
 * work (garbage collection, compiling). By owner: each sample charged to the nearest frame on its stack that is this
 * repository's code or an npm package, so the runtime's streams and sockets count for the driver or server that
 * called them.
 *
 * @example
 * ```ts
 * const { result, profile } = await profileDuring(9229, () => runLoad());
 * console.log(profileTable(summarizeProfile(profile)));
 * ```
 */
import { markdownTable } from "./report.ts";

interface CallFrame {
  functionName: string;
  url: string;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

/** What `Profiler.stop` answers: the call tree, and which node each sample hit and after how long (µs). */
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Shares of the busy samples (idle left out), largest first. */
export interface ProfileSummary {
  busyMs: number;
  byModule: { part: string; share: number }[];
  byOwner: { part: string; share: number }[];
}

/** Runs `work` while the inspector of the process on `port` samples its CPU every `intervalUs`. */
export async function profileDuring<T>(
  port: number,
  work: () => Promise<T>,
  intervalUs = 200,
): Promise<{ result: T; profile: CpuProfile }> {
  const [target] = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  let nextId = 0;
  const pending = new Map<number, (result: unknown) => void>();
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    pending.get(message.id)?.(message.result);
    pending.delete(message.id);
  };
  const send = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolve) => {
      const id = ++nextId;
      pending.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  try {
    await send("Profiler.enable");
    await send("Profiler.setSamplingInterval", { interval: intervalUs });
    await send("Profiler.start");
    const result = await work();
    const { profile } = await send("Profiler.stop") as { profile: CpuProfile };
    return { result, profile };
  } finally {
    socket.close();
  }
}

const repositoryRoot = new URL("../", import.meta.url).href;
const repositoryFolder = /^(supabase\/functions\/[^/]+|dev|shared)\/(?:([^/]+)\/)?/;
const npmPackage = /\/node_modules\/(?:\.deno\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)\//;

/** The module a frame's code belongs to, or undefined for a frame of Deno's runtime or V8 that no module owns. */
function moduleOf({ url }: CallFrame): string | undefined {
  const npm = npmPackage.exec(url);
  if (npm) return `npm ${npm[1]}`;
  const own = url.startsWith(repositoryRoot) ? repositoryFolder.exec(url.slice(repositoryRoot.length)) : null;
  if (!own) return undefined;
  // _shared/ by concern folder; a function's own folder, dev/ and shared/ as a whole.
  return own[1] === "supabase/functions/_shared" && own[2] ? `_shared/${own[2]}` : own[1].replace(/^supabase\//, "");
}

/** The part of the runtime or V8 a frame no module owns belongs to. */
function runtimePartOf({ functionName, url }: CallFrame): string {
  if (functionName === "(garbage collector)") return "V8: garbage collection";
  if (functionName === "(program)") return "V8 and Deno's native code";
  if (url.startsWith("ext:deno_node/")) return "Deno: Node compatibility (ext:deno_node)";
  if (url.startsWith("ext:")) return `Deno: ${url.slice(4).split("/")[0]}`;
  // A native function (a V8 builtin, or one of Deno's written in Rust, such as a socket's writev), by its name.
  return url ? "other scripts" : `native ${functionName || "code"}`;
}

/** The profile's busy samples summed by module and by owner. */
export function summarizeProfile(profile: CpuProfile): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  // A node's owner is its own module or its parent's owner, found once per node, not once per sample.
  const ownerByNode = new Map<number, string | undefined>();
  const ownerOf = (id: number): string | undefined => {
    if (!ownerByNode.has(id)) {
      const parent = parentOf.get(id);
      ownerByNode.set(id, moduleOf(byId.get(id)!.callFrame) ?? (parent === undefined ? undefined : ownerOf(parent)));
    }
    return ownerByNode.get(id);
  };
  const modules = new Map<string, number>();
  const owners = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, index) => {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === "(idle)") return;
    // A delta is the time since the sample before; a sample's own time runs until the next (as DevTools counts it).
    const micros = profile.timeDeltas[index + 1] ?? 0;
    busy += micros;
    const module = moduleOf(frame) ?? runtimePartOf(frame);
    modules.set(module, (modules.get(module) ?? 0) + micros);
    const owner = ownerOf(id) ?? runtimePartOf(frame);
    owners.set(owner, (owners.get(owner) ?? 0) + micros);
  });
  const shares = (totals: Map<string, number>) =>
    [...totals].map(([part, micros]) => ({ part, share: micros / busy })).sort((a, b) => b.share - a.share);
  return { busyMs: busy / 1000, byModule: shares(modules), byOwner: shares(owners) };
}

/** The two summaries side by side, each part at least `least` of the busy time, the rest in one row. */
export function profileTable(summary: ProfileSummary, least = 0.01): string {
  const rows = (parts: { part: string; share: number }[]) => {
    const shown = parts.filter((part) => part.share >= least);
    const rest = parts.slice(shown.length).reduce((sum, part) => sum + part.share, 0);
    return [...shown.map((part) => [part.part, `${(part.share * 100).toFixed(1)}%`]), [
      "the rest",
      `${(rest * 100).toFixed(1)}%`,
    ]];
  };
  const [modules, owners] = [rows(summary.byModule), rows(summary.byOwner)];
  const length = Math.max(modules.length, owners.length);
  return markdownTable(
    ["Self time by module", "Share", "By owner (the nearest module on the stack)", "Share"],
    Array.from({ length }, (_, index) => [...(modules[index] ?? ["", ""]), ...(owners[index] ?? ["", ""])]),
  );
}
