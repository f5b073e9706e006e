/**
 * A TCP proxy that a test puts between a stack and its PostgreSQL and then
 * breaks on purpose: `cut()` drops every open connection and swallows new ones
 * (accepts them and never answers, the worst kind of unreachable: no refusal
 * to fail fast on); `restore()` lets traffic through again.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net";

export interface TcpProxy {
  /** `databaseUrl` with its host and port replaced by the proxy's. */
  route(databaseUrl: string): string;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

/** Starts a proxy on a free loopback port in front of `upstream` (host and port of PostgreSQL). */
export async function startTcpProxy(upstream: { host: string; port: number }): Promise<TcpProxy> {
  let isCut = false;
  const open = new Set<Socket>();

  const server: Server = createServer((client) => {
    open.add(client);
    client.on("close", () => open.delete(client));
    client.on("error", () => client.destroy());
    // Swallowed: accepted, never forwarded, never answered.
    if (isCut) return;
    const database = createConnection(upstream);
    open.add(database);
    database.on("close", () => {
      open.delete(database);
      client.destroy();
    });
    database.on("error", () => database.destroy());
    client.on("close", () => database.destroy());
    client.pipe(database);
    database.pipe(client);
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
    restore() {
      isCut = false;
      // Swallowed connections have long timed out on the client side; let go of them too.
      dropAll();
    },
    async close() {
      dropAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
