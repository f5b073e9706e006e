/**
 * Drives one target with autocannon at a fixed concurrency for a fixed time
 * and summarises what came back. Latencies are taken from autocannon's
 * per-response event, in fractional milliseconds, because its own histogram
 * rounds to whole milliseconds, too coarse for a floor that answers in one.
 *
 * @example
 * ```ts
 * const result = await drive("http://127.0.0.1:8000", () => ({ method: "GET", path: "/" }), { connections: 10, seconds: 5 });
 * ```
 */
import autocannon from "autocannon";

/** One HTTP request of a scenario, relative to the target's origin. */
export interface LoadRequest {
  method: "GET" | "POST" | "DELETE";
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** What one timed run recorded, before it is summarised with others. */
export interface LoadSample {
  seconds: number;
  /** Latency of each 2xx answer, in milliseconds. */
  latencies: number[];
  statuses: Record<string, number>;
  /** Connection errors and timeouts. */
  errors: number;
}

/** What the timed runs of one target measured. */
export interface LoadResult {
  /** Successful (2xx) answers per second over the runs. */
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** 2xx answers in the runs. */
  succeeded: number;
  /** Non-2xx answers and connection errors: a run with any is not a valid measurement. */
  failed: number;
  /** Answers by status code, to tell what failed. */
  statuses: Record<string, number>;
}

/** The value at quantile `q` (0..1) of sorted `values`, by nearest rank. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1];
}

/** The median of `values` (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Pools the samples of one target: rates over their summed time, percentiles over all answers. */
export function summarize(samples: readonly LoadSample[]): LoadResult {
  const latencies = samples.flatMap((sample) => sample.latencies).sort((a, b) => a - b);
  const seconds = samples.reduce((sum, sample) => sum + sample.seconds, 0);
  const statuses: Record<string, number> = {};
  let failed = 0;
  for (const sample of samples) {
    failed += sample.errors;
    for (const [status, count] of Object.entries(sample.statuses)) {
      statuses[status] = (statuses[status] ?? 0) + count;
      if (!status.startsWith("2")) failed += count;
    }
  }
  return {
    requestsPerSecond: latencies.length / seconds,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    succeeded: latencies.length,
    failed,
    statuses,
  };
}

/**
 * Sends `next()`'s requests to `origin` from `connections` connections for
 * `seconds` seconds, each connection waiting for its answer before the next.
 */
export async function drive(
  origin: string,
  next: () => LoadRequest,
  options: { connections: number; seconds: number },
): Promise<LoadSample> {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const started = performance.now();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon({
      url: origin,
      connections: options.connections,
      duration: options.seconds,
      requests: [{ setupRequest: (request) => ({ ...request, ...next() }) }],
    }, (error, finished) => error ? reject(error) : resolve(finished));
    instance.on("response", (_client, statusCode, _bytes, responseTime) => {
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  });
  return {
    seconds: Math.min(result.duration, (performance.now() - started) / 1000),
    latencies,
    statuses,
    errors: result.errors,
  };
}
