/**
 * A login flood and a probe beside it: `connections` clients send logins for
 * unknown emails as fast as they are answered, while one other user reads
 * their notes, one call after another. What a flood must not do is make the
 * other user's calls fail or crawl; what the flood's own answers were (401,
 * or 503 once too many hashes wait) is reported beside it. Used by the bench
 * (which reports the probe's p50 and p95) and by the tests (which check that
 * every probe call succeeded).
 *
 * @example
 * ```ts
 * const flood = await loginFlood(baseUrl, { apiKey, probeAuthorization, connections: 300, seconds: 12 });
 * ```
 */
import { drive } from "./load.ts";

export interface LoginFloodResult {
  /** The flood's answers by status code, with connection errors as "error". */
  floodStatuses: Record<string, number>;
  /** The probe's answers by status code. */
  probeStatuses: Record<string, number>;
  /** The probe's latencies in milliseconds, sorted. */
  probeLatencies: number[];
}

export async function loginFlood(
  baseUrl: string,
  options: { apiKey: string; probeAuthorization: string; connections: number; seconds: number },
): Promise<LoginFloodResult> {
  const url = new URL(baseUrl);
  let counter = 0;
  let flooding = true;
  const flood = drive(url.origin, () => ({
    method: "POST",
    path: `${url.pathname}/auth/login`,
    headers: { "content-type": "application/json", apikey: options.apiKey },
    body: JSON.stringify({ email: `flood-${Date.now()}-${counter++}@example.com`, password: "guess password" }),
  }), { connections: options.connections, seconds: options.seconds }).finally(() => {
    flooding = false;
  });

  const probeStatuses: Record<string, number> = {};
  const probeLatencies: number[] = [];
  // The probe starts once the flood is under way and stops with it.
  await new Promise((resolve) => setTimeout(resolve, 500));
  while (flooding) {
    const started = performance.now();
    const status = await fetch(`${baseUrl}/notes-fetch?limit=10`, {
      headers: { authorization: options.probeAuthorization },
    }).then(async (response) => {
      await response.arrayBuffer();
      return String(response.status);
    }, () => "error");
    probeLatencies.push(performance.now() - started);
    probeStatuses[status] = (probeStatuses[status] ?? 0) + 1;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const { statuses, errors } = await flood;
  const floodStatuses = errors > 0 ? { ...statuses, error: errors } : statuses;
  return { floodStatuses, probeStatuses, probeLatencies: probeLatencies.sort((a, b) => a - b) };
}
