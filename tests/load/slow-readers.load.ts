/**
 * Clients that ask for the largest answer and never read it: 150 connections
 * ask for a page of 100 notes of 120 KB each (12 MB of JSON) and read it
 * with slowhttptest's slow-read mode (`-X`: a tiny receive window, a few bytes
 * a second). Without a bound each one held its whole answer in the stack's
 * memory, and none was closed. Here the stack's memory must stay within
 * 300 MB of what it used idle, every such connection must be closed within
 * 45 s, and another user must be served meanwhile.
 *
 * About a minute long, so not part of `npm test`: `npm run test:load`
 * (`.ci/run` runs it after the suites). Needs Debian's `slowhttptest`.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type RegisteredUser, registerUser } from "../support/api.ts";
import { type RunningStack, startStack } from "../../dev/harness/stack.ts";
import { openStream } from "../../dev/harness/event-stream.ts";

const readers = 150;
const notesOnPage = 100;
/** 100,000 characters (the most a note holds), 20,000 of them two bytes long in UTF-8: 120 KB. */
const noteContent = "é".repeat(20_000) + "a".repeat(80_000);
const memoryBound = 300 * 1024 * 1024;
const closedWithinSeconds = 45;

let stack: RunningStack;
let reader: RegisteredUser;

beforeAll(async () => {
  // The stack as `npm start` runs it: the embedded PGlite in its own process, one connection to it. Its account may
  // open as many streams as there are readers, so each stream is admitted and what bounds them is the answer budget.
  stack = await startStack({ env: { STREAM_MAX_PER_USER: String(readers) } });
  reader = await registerUser("slow-reader", { baseUrl: stack.baseUrl });
  for (let made = 0; made < notesOnPage; made += 10) {
    await Promise.all(Array.from({ length: 10 }, async () => {
      const created = await callStack("/notes-create", {
        token: reader.accessToken,
        body: { title: "large", content: noteContent },
      });
      if (created.status !== 201) throw new Error(`seeding failed: ${created.status} ${created.text}`);
    }));
  }
});

afterAll(async () => {
  await stack?.stop();
});

function callStack(path: string, request: Parameters<typeof call>[1] = {}) {
  return call(path, { ...request, baseUrl: stack.baseUrl });
}

function stackRss(): number {
  const status = readFileSync(`/proc/${stack.pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

interface TcpEntry {
  localPort: number;
  remotePort: number;
  state: string;
  inode: string;
}

/** The kernel's table of TCP sockets (IPv4 and IPv6). */
function tcpEntries(): TcpEntry[] {
  const port = (address: string) => parseInt(address.split(":")[1], 16);
  return ["/proc/net/tcp", "/proc/net/tcp6"]
    .flatMap((table) => readFileSync(table, "utf8").trim().split("\n").slice(1))
    .map((line) => line.trim().split(/\s+/))
    .map((fields) => ({ localPort: port(fields[1]), remotePort: port(fields[2]), state: fields[3], inode: fields[9] }));
}

/** The inodes of the sockets process `pid` holds (none once it has exited). */
function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  const fds = (() => {
    try {
      return readdirSync(`/proc/${pid}/fd`);
    } catch {
      return [];
    }
  })();
  for (const fd of fds) {
    const target = (() => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return ""; // closed meanwhile
      }
    })();
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode) inodes.add(inode);
  }
  return inodes;
}

/**
 * The ports of `clientPid`'s connections that the stack still holds open (established, or closed by the client
 * only). One the stack has closed no longer counts, even while the kernel still tries to deliver what it had queued.
 */
function heldOpenByStack(clientPid: number): number[] {
  const stackPort = Number(new URL(stack.baseUrl).port);
  const entries = tcpEntries();
  const inodes = socketInodes(clientPid);
  const clientPorts = new Set(entries.filter((entry) => inodes.has(entry.inode)).map((entry) => entry.localPort));
  const held = new Set(["01", "08"]); // ESTABLISHED, CLOSE_WAIT
  return entries
    .filter((entry) => entry.localPort === stackPort && clientPorts.has(entry.remotePort) && held.has(entry.state))
    .map((entry) => entry.remotePort);
}

/** How many requests to `name` the stack has logged. */
function logged(name: string): number {
  return readFileSync(stack.logFile, "utf8").split("\n").filter((line) => line.includes(`"function":"${name}"`))
    .length;
}

async function untilLogged(name: string, count: number): Promise<void> {
  for (const deadline = Date.now() + 30_000; logged(name) < count;) {
    if (Date.now() > deadline) throw new Error(`the stack logged ${logged(name)} of ${count} requests to ${name}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The change feed's cursor before the reader's first note: a stream from it catches up on all 12 MB of them. */
function cursorBeforeEverything(): string {
  return Buffer.from(`c1.${reader.id}.0`).toString("base64url");
}

/** What the slow readers ask for: a page of every note, and a live update stream that starts with all of them. */
const largeAnswers = [
  { name: "notes-fetch", path: () => `/notes-fetch?limit=${notesOnPage}` },
  { name: "notes-stream", path: () => `/notes-stream?since=${cursorBeforeEverything()}` },
];

describe("clients that never read their answer", () => {
  it.each(largeAnswers)(
    `${readers} slow readers of 12 MB from $name: memory stays bounded, each is closed within ${closedWithinSeconds} s, others are served`,
    async ({ name, path }) => {
      const page = await callStack(`/notes-fetch?limit=${notesOnPage}`, { token: reader.accessToken });
      expect(page.status).toBe(200);
      expect(Buffer.byteLength(page.text)).toBeGreaterThan(12_000_000);
      const bystander = await registerUser("bystander", { baseUrl: stack.baseUrl });
      const idle = stackRss();
      const fetchesLogged = logged(name);

      // slowhttptest sends no header of the caller's own: the token rides in after its Cookie header.
      const cookie = `seen=1\r\nAuthorization: Bearer ${reader.accessToken.replace(/^Bearer /, "")}`;
      const attack = spawn("slowhttptest", [
        "-X", // slow read: a receive window of 1 to 512 bytes, 32 bytes read every 5 s
        ...["-c", String(readers), "-r", String(readers), "-w", "1", "-y", "512", "-n", "5", "-z", "32"],
        ...["-l", String(closedWithinSeconds + 5)],
        ...["-j", cookie, "-u", `${stack.baseUrl}${path()}`],
      ], { stdio: ["ignore", "pipe", "pipe"] });
      let report = "";
      for (const output of [attack.stdout, attack.stderr]) output?.on("data", (chunk) => (report += chunk));
      const attackEnded = new Promise((resolve) => attack.once("exit", resolve));

      // The stack's memory, and when each connection was first seen open, four times a second.
      let peak = idle;
      let mostOpen = 0;
      let longestOpenMs = 0;
      const openSince = new Map<number, number>();
      const watch = setInterval(() => {
        peak = Math.max(peak, stackRss());
        const now = performance.now();
        const open = heldOpenByStack(attack.pid ?? 0);
        mostOpen = Math.max(mostOpen, open.length);
        for (const port of open) {
          if (!openSince.has(port)) openSince.set(port, now);
          longestOpenMs = Math.max(longestOpenMs, now - (openSince.get(port) ?? now));
        }
      }, 250);
      // Once every slow reader's request has been answered (the burst of 150 queries for 12 MB each is over, and
      // those the database could not take within the deadline were answered 503), another user reads their own
      // small notes every second, while the slow readers hold their connections.
      await untilLogged(name, fetchesLogged + readers);
      // Meanwhile the other user reads their own small notes every second, and follows their changes live: while the
      // slow readers hold the answer budget, small answers and small batches never wait on it.
      const bystanderStream = await openStream(stack.baseUrl, bystander.accessToken);
      await bystanderStream.waitFor((message) => message.kind === "event" && message.event === "ready", 10_000);
      const statuses: number[] = [];
      const created: string[] = [];
      const probeOnce = async () => {
        const answer = await callStack("/notes-fetch", { token: bystander.accessToken }).catch(() => undefined);
        statuses.push(answer?.status ?? 0);
        const note = await callStack("/notes-create", { token: bystander.accessToken, body: { title: "small" } });
        created.push((note.body as { data: { id: string } }).data.id);
      };
      // Each probe's outcome (undefined, or what it threw), kept so that a probe still under way when the attack ends
      // is waited for: left running, it created a note after the checks below and, once the stack had stopped, failed
      // the run with a rejection no test caught.
      const probes: Promise<unknown>[] = [];
      const probe = setInterval(() => probes.push(probeOnce().then(() => undefined, (error: unknown) => error)), 1_000);
      await attackEnded;
      clearInterval(watch);
      clearInterval(probe);
      expect((await Promise.all(probes)).filter((outcome) => outcome !== undefined)).toEqual([]);
      await bystanderStream.waitFor(() => bystanderStream.changes().length >= created.length, 10_000);
      bystanderStream.close();

      const megabytes = (bytes: number) => Math.round(bytes / 1024 / 1024);
      console.info(
        `slow readers of ${name}: idle ${megabytes(idle)} MB, peak ${
          megabytes(peak)
        } MB; at most ${mostOpen} open, the longest ` +
          `for ${(longestOpenMs / 1_000).toFixed(1)} s; the other user's answers: ${statuses.join(" ")}`,
      );
      expect(mostOpen, `the slow readers were connected:\n${report}`).toBeGreaterThan(readers / 2);
      expect(longestOpenMs, "the longest a slow reader's connection stayed open").toBeLessThan(
        closedWithinSeconds * 1_000,
      );
      expect(peak - idle, `idle ${idle}, peak ${peak}`).toBeLessThan(memoryBound);
      expect(statuses.length).toBeGreaterThan(closedWithinSeconds / 2);
      expect(statuses.every((status) => status === 200), statuses.join(" ")).toBe(true);
      // Every change reached the other user's stream, which stayed open throughout.
      expect(bystanderStream.changes().map(({ change }) => (change as { id: string }).id)).toEqual(created);
      expect(bystanderStream.messages.some((message) => message.kind === "retry")).toBe(false);
    },
    180_000,
  );
});
