/**
 * PgBouncer in transaction mode in front of a PostgreSQL database, the way
 * Supabase's dedicated pooler (and Supavisor on port 6543) runs: a server
 * connection is lent to a client for one transaction only, and startup
 * parameters beyond the few it knows are refused. `npm run test:pooler` runs
 * the whole suite with the stack connected through it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stopProcess } from "./stack.ts";
import { freePort } from "./free-port.ts";

export interface RunningPooler {
  /** `databaseUrl` with its host and port replaced by the pooler's. */
  url: string;
  stop(): Promise<void>;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket().once("connect", () => resolve(true)).once("error", () => resolve(false));
    socket.connect(port, "127.0.0.1");
    setTimeout(() => socket.destroy(), 500);
  });
}

/** Starts PgBouncer (Debian's `pgbouncer`) in transaction mode in front of the server of `databaseUrl`. */
export async function startPgBouncer(databaseUrl: string): Promise<RunningPooler> {
  const target = new URL(databaseUrl);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "notes-pgbouncer-"));
  // PgBouncer will not run as root; as root it is started as the postgres user, who must read these files.
  chmodSync(dir, 0o755);
  const user = decodeURIComponent(target.username) || "postgres";
  writeFileSync(join(dir, "users.txt"), `"${user}" ""\n`, { mode: 0o644 });
  writeFileSync(
    join(dir, "pgbouncer.ini"),
    [
      "[databases]",
      `* = host=${target.hostname} port=${target.port || 5432}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${join(dir, "users.txt")}`,
      "pool_mode = transaction",
      "default_pool_size = 10",
      "max_client_conn = 500",
      // A server connection that failed (a test broke the database) is tried again after 1 s, not 15.
      "server_login_retry = 1",
      "",
    ].join("\n"),
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(
    "pgbouncer",
    [...(asRoot ? ["-u", "postgres"] : []), join(dir, "pgbouncer.ini")],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let output = "";
  child.stderr?.on("data", (chunk) => (output = (output + chunk).slice(-8_000)));
  const deadline = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stopProcess(child);
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`pgbouncer did not start (is Debian's pgbouncer installed?):\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const url = new URL(databaseUrl);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.toString(),
    async stop() {
      await stopProcess(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
