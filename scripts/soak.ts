/**
 * `npm run soak`: a mixed workload against the real stack on loopback for a
 * fixed, bounded time (SOAK_SECONDS, default 60; SOAK_CLIENTS concurrent
 * clients, default 16), on a fresh PostgreSQL database that is dropped after.
 * It samples the stack's database connections and memory, prints a report,
 * and fails when any answer was a 5xx or the connections exceeded the pool.
 * Not part of `npm test`: it takes its time on purpose.
 */
import postgres from "postgres";
import { createScratchDatabase, sharedStackLimits, startStack, testAnonKey } from "../dev/harness/stack.ts";

const seconds = Number(Deno.env.get("SOAK_SECONDS") ?? "60");
const clients = Number(Deno.env.get("SOAK_CLIENTS") ?? "16");
const poolMax = 5;
if (!(seconds > 0 && seconds <= 3600) || !(clients > 0 && clients <= 256)) {
  console.error("SOAK_SECONDS must be 1 to 3600 and SOAK_CLIENTS 1 to 256");
  Deno.exit(2);
}

/** Resident memory of a process in MiB, from the kernel's own accounting. */
function residentMiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const kib = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? "0");
  return Math.round(kib / 102.4) / 10;
}

const database = await createScratchDatabase("notes_soak");
// Every client calls from 127.0.0.1: the per-address login limit would be the workload's bottleneck.
const stack = await startStack({
  databaseUrl: database.url,
  env: { ...sharedStackLimits, DB_POOL_MAX: String(poolMax), BCRYPT_COST: "6" },
});
const observer = postgres(database.url, {
  max: 1,
  prepare: false,
  onnotice: () => {},
});

const statuses = new Map<number, number>();
const latencies: number[] = [];
let unexpected = 0;

async function request(
  path: string,
  init: { method?: string; token?: string; body?: unknown; auth?: boolean },
) {
  const headers: Record<string, string> = {};
  if (init.auth) headers.apikey = testAnonKey;
  if (init.token) headers.Authorization = init.token;
  if (init.body !== undefined) headers["Content-Type"] = "application/json";
  const started = performance.now();
  const response = await fetch(`${stack.baseUrl}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const body = await response.json();
  latencies.push(performance.now() - started);
  statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
  return { status: response.status, body };
}

/** One client: registers, then mixes every endpoint until the deadline, including failing requests. */
async function client(index: number, deadline: number): Promise<void> {
  const email = `soak-${index}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const password = "soak password";
  const registered = await request("/auth/register", {
    auth: true,
    body: { name: `Soak ${index}`, email, password },
  });
  let token: string = registered.body.data.accessToken;
  const noteIds: string[] = [];
  while (performance.now() < deadline) {
    const roll = Math.random();
    if (roll < 0.3) {
      const created = await request("/notes-create", {
        token,
        body: { title: `soak ${roll}`, content: "x".repeat(200) },
      });
      if (created.status === 201) noteIds.push(created.body.data.id);
    } else if (roll < 0.6) {
      await request(`/notes-fetch?limit=${1 + Math.floor(roll * 100)}`, {
        token,
      });
    } else if (roll < 0.75 && noteIds.length > 0) {
      await request("/notes-save", {
        token,
        body: { id: noteIds[0], status: "PUBLISHED", content: `saved ${roll}` },
      });
    } else if (roll < 0.82 && noteIds.length > 0) {
      await request(`/notes-delete?id=${noteIds.pop()}`, {
        method: "DELETE",
        token,
      });
    } else if (roll < 0.86) {
      const login = await request("/auth/login", {
        auth: true,
        body: { email, password },
      });
      if (login.status === 200) token = login.body.data.accessToken;
    } else if (roll < 0.87) {
      await request("/auth/request-password-reset", {
        auth: true,
        body: { email },
      });
    } else {
      // Requests that must fail with a 4xx: bad bodies, bad tokens, unknown notes.
      const failing = [
        () => request("/notes-create", { token, body: { status: "ARCHIVED" } }),
        () => request("/notes-fetch?limit=0", { token }),
        () =>
          request("/notes-save", {
            token: "Bearer not.a.token",
            body: { id: "x", title: "y" },
          }),
        () =>
          request(`/notes-delete?id=${crypto.randomUUID()}`, {
            method: "DELETE",
            token,
          }),
      ];
      const { status } = await failing
        [Math.floor(Math.random() * failing.length)]();
      if (status < 400 || status >= 500) unexpected++;
    }
  }
}

let maxConnections = 0;
const sampleConnections = async () => {
  const [row] = await observer<{ count: number }[]>`
    select count(*)::int as count from pg_stat_activity
    where datname = current_database() and application_name = 'notes-service'`;
  maxConnections = Math.max(maxConnections, row.count);
};

let exitCode = 0;
try {
  const memoryStart = residentMiB(stack.pid);
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const sampler = setInterval(() => void sampleConnections(), 500);
  await Promise.all(
    Array.from({ length: clients }, (_, index) => client(index, deadline)),
  );
  clearInterval(sampler);
  await sampleConnections();
  const elapsed = (performance.now() - started) / 1000;
  const memoryEnd = residentMiB(stack.pid);

  latencies.sort((a, b) => a - b);
  const percentile = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))];
  const serverErrors = [...statuses].filter(([status]) => status >= 500).reduce(
    (sum, [, count]) => sum + count,
    0,
  );
  const report = {
    seconds: Math.round(elapsed),
    clients,
    requests: latencies.length,
    requestsPerSecond: Math.round(latencies.length / elapsed),
    statuses: Object.fromEntries([...statuses].sort(([a], [b]) => a - b)),
    serverErrors,
    unexpectedAnswersToFailingRequests: unexpected,
    latencyMs: {
      p50: Math.round(percentile(0.5)),
      p99: Math.round(percentile(0.99)),
    },
    databaseConnections: { max: maxConnections, bound: poolMax },
    stackMemoryMiB: { start: memoryStart, end: memoryEnd },
  };
  console.log(JSON.stringify(report, null, 2));
  if (serverErrors > 0 || unexpected > 0 || maxConnections > poolMax) {
    exitCode = 1;
  }
} finally {
  await observer.end({ timeout: 5 });
  await stack.stop();
  await database.drop();
}
Deno.exit(exitCode);
