/**
 * Live update streams whose clients never read: 1,000 of them on the stack as
 * `npm start` runs it (the embedded PGlite in the same process), 500 of which
 * start from a cursor with 1 MB of changes behind it. Those push their
 * catch-up through the isolate as fast as the sockets' buffers take it: the
 * stack must hold no more of it than the answer budget allows, and collect
 * the rest, staying within 300 MB of what it used idle.
 *
 * About three minutes, most of it writing the notes, so not part of `npm test`: `npm run test:load`.
 */
import { connect, type Socket } from "node:net";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type RegisteredUser, registerUser } from "../support/api.ts";
import { type RunningStack, sharedStackLimits, startStack } from "../../dev/harness/stack.ts";

/** 250 accounts with 1 MB of notes open two streams each from before their first; 50 others open ten each. */
const catchingUp = { accounts: 250, streams: 2 };
const waiting = { accounts: 50, streams: 10 };
/** Ten notes of 100,000 characters each: 1 MB of changes for every stream of the accounts that catch up. */
const notesToCatchUp = 10;
const noteContent = "a".repeat(100_000);
const memoryBound = 300 * 1024 * 1024;

let stack: RunningStack;
const users: RegisteredUser[] = [];

beforeAll(async () => {
  stack = await startStack({
    env: { ...sharedStackLimits, BCRYPT_COST: "4" },
  });
  for (let i = 0; i < catchingUp.accounts + waiting.accounts; i++) {
    users.push(await registerUser(`idle-stream-${i}`, { baseUrl: stack.baseUrl }));
  }
  for (const user of users.slice(0, catchingUp.accounts)) {
    await Promise.all(Array.from({ length: notesToCatchUp }, async () => {
      const created = await call("/notes-create", {
        baseUrl: stack.baseUrl,
        token: user.accessToken,
        body: { title: "large", content: noteContent },
      });
      if (created.status !== 201) throw new Error(`seeding failed: ${created.status} ${created.text}`);
    }));
  }
}, 600_000);

afterAll(async () => {
  await stack?.stop();
});

function stackRss(): number {
  const status = readFileSync(`/proc/${stack.pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

/** The feed's cursor before the user's first change. */
function cursorBeforeEverything(user: RegisteredUser): string {
  return Buffer.from(`c1.${user.id}.0`).toString("base64url");
}

/** Asks for a stream over a bare socket that never reads what comes back. */
function unreadStream(user: RegisteredUser, since: string | undefined): Socket {
  const { hostname, port, pathname } = new URL(stack.baseUrl);
  const socket = connect({ host: hostname, port: Number(port) });
  const query = since ? `?since=${since}` : "";
  const token = user.accessToken.replace(/^Bearer /, "");
  socket.write(
    `GET ${pathname}/notes-stream${query} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\n` +
      "Accept: text/event-stream\r\n\r\n",
  );
  socket.pause();
  socket.on("error", () => {});
  return socket;
}

/** How many requests to notes-stream the stack has logged. */
function streamsLogged(): number {
  return readFileSync(stack.logFile, "utf8").split("\n").filter((line) => line.includes(`"function":"notes-stream"`))
    .length;
}

describe("live update streams that never read", () => {
  it("1,000 of them, 500 with 1 MB to catch up on, keep the stack within 300 MB of its idle memory", async () => {
    const idle = stackRss();
    let peak = idle;
    const watch = setInterval(() => (peak = Math.max(peak, stackRss())), 250);
    const sockets: Socket[] = [];
    try {
      users.forEach((user, i) => {
        const catchesUp = i < catchingUp.accounts;
        const since = catchesUp ? cursorBeforeEverything(user) : undefined;
        for (let s = 0; s < (catchesUp ? catchingUp : waiting).streams; s++) sockets.push(unreadStream(user, since));
      });
      // Every stream answered, then a while for what they read and hold to settle.
      for (const deadline = Date.now() + 120_000; streamsLogged() < sockets.length;) {
        if (Date.now() > deadline) throw new Error(`the stack logged ${streamsLogged()} of ${sockets.length} streams`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      await new Promise((resolve) => setTimeout(resolve, 10_000));
    } finally {
      clearInterval(watch);
      for (const socket of sockets) socket.destroy();
    }
    const megabytes = (bytes: number) => Math.round(bytes / 1024 / 1024);
    console.info(`${sockets.length} unread streams: idle ${megabytes(idle)} MB, peak ${megabytes(peak)} MB`);
    expect(peak - idle, `idle ${megabytes(idle)} MB, peak ${megabytes(peak)} MB`).toBeLessThan(memoryBound);
  }, 240_000);
});
