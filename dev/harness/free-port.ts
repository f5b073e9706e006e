/**
 * A loopback port free right now, for a process that must be told its port
 * before it starts: PgBouncer, or a stack whose callback URL an identity
 * provider must know in advance.
 */
import { createServer } from "node:net";

/** A port the OS reports free right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    }).on("error", reject);
  });
}
