/**
 * A TCP proxy that a test puts between a stack and its PostgreSQL and then
 * breaks on purpose: `cut()` drops every open connection and swallows new ones
 * (accepts them and never answers, the worst kind of unreachable: no refusal
 * to fail fast on); `stall()` black-holes the database instead: open
 * connections stay open but nothing more crosses them either way (packets
 * dropped, no reset), and new ones are swallowed as by `cut()`; `restore()`
 * lets traffic through again. `delay(ms)` holds
 * every chunk that long in each direction, so a round trip costs twice that:
 * a database far away, as the bench's round-trip count needs. The same proxy
 * stands in front of an object store, counting the bytes clients send it.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net";

export interface TcpProxy {
  /** `databaseUrl` with its host and port replaced by the proxy's. */
  route(databaseUrl: string): string;
  cut(): void;
  /** Stops forwarding in both directions without closing anything: a database that stops answering. */
  stall(): void;
  restore(): void;
  /** From now on, each chunk waits `ms` in either direction (0: passed on at once). */
  delay(ms: number): void;
  /** Bytes passed on from clients to the upstream so far: what clients sent, resends included. */
  bytesUpstream(): number;
  close(): Promise<void>;
}

/** Starts a proxy on a free loopback port in front of `upstream` (host and port of PostgreSQL). */
export async function startTcpProxy(upstream: { host: string; port: number }): Promise<TcpProxy> {
  let isCut = false;
  let isStalled = false;
  let delayMs = 0;
  let upstreamBytes = 0;
  const open = new Set<Socket>();
  // Same delay for every chunk of a direction, so timers fire, and chunks arrive, in order.
  const forward = (from: Socket, to: Socket) =>
    from.on("data", (chunk) => {
      if (isStalled) return;
      if (delayMs === 0) to.write(chunk);
      else setTimeout(() => to.writable && to.write(chunk), delayMs);
    });

  // No Nagle delay on either leg: a pipelined transaction is several small writes in a row, which
  // Nagle's algorithm would hold until the peer's delayed ACK (40 ms on Linux).
  const server: Server = createServer({ noDelay: true }, (client) => {
    open.add(client);
    client.on("close", () => open.delete(client));
    client.on("error", () => client.destroy());
    // Swallowed: accepted, never forwarded, never answered.
    if (isCut || isStalled) return;
    const database = createConnection({ ...upstream, noDelay: true });
    open.add(database);
    database.on("close", () => {
      open.delete(database);
      client.destroy();
    });
    database.on("error", () => database.destroy());
    client.on("close", () => database.destroy());
    forward(client, database);
    forward(database, client);
    client.on("data", (chunk: Buffer) => {
      if (!isStalled) upstreamBytes += chunk.length;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("proxy has no TCP address");

  const dropAll = () => {
    for (const socket of open) socket.destroy();
    open.clear();
  };

  return {
    route(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = "127.0.0.1";
      url.port = String(address.port);
      return url.toString();
    },
    cut() {
      isCut = true;
      dropAll();
    },
    stall() {
      isStalled = true;
    },
    delay(ms) {
      delayMs = ms;
    },
    bytesUpstream: () => upstreamBytes,
    restore() {
      isCut = false;
      isStalled = false;
      // Stalled and swallowed connections have long timed out on the client side; let go of them too.
      dropAll();
    },
    async close() {
      dropAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
