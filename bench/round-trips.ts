/**
 * Round trips to Postgres per endpoint, measured rather than reasoned: the
 * stack reaches its database through a TCP proxy, and each endpoint's median
 * latency over sequential requests is taken with the proxy passing traffic at
 * once and again with it holding every chunk `rttMs / 2` in each direction.
 * The difference divided by the round-trip time is the number of round trips.
 * Also the first page of a 10-note user against the 20,000-note user, which
 * shows whether a listing's cost grows with the owner's notes.
 *
 * @example
 * ```ts
 * const report = await measureRoundTrips(stack.baseUrl, proxy, { rttMs: 40, samples: 15, heavy });
 * ```
 */
import type { TcpProxy } from "../dev/harness/tcp-proxy.ts";
import { median } from "./load.ts";

/** One endpoint's latencies and the round trips they imply. */
export interface RoundTripRow {
  endpoint: string;
  directMs: number;
  delayedMs: number;
  roundTrips: number;
}

/** The heavy user's and a 10-note user's first page, sequential medians without delay. */
export interface FirstPageCost {
  lightNotes: number;
  heavyNotes: number;
  lightMs: number;
  heavyMs: number;
  /** heavy / light. */
  ratio: number;
}

interface Call {
  path: string;
  method: string;
  headers: Record<string, string>;
  body?: unknown;
  /** The status every answer must have, so a broken call is not timed as a fast one. */
  status: number;
}

async function send(baseUrl: string, call: Call): Promise<{ ms: number; body: { data?: Record<string, unknown> } }> {
  const started = performance.now();
  const response = await fetch(`${baseUrl}${call.path}`, {
    method: call.method,
    headers: { ...call.headers, ...(call.body === undefined ? {} : { "content-type": "application/json" }) },
    body: call.body === undefined ? undefined : JSON.stringify(call.body),
  });
  const body = await response.json();
  const ms = performance.now() - started;
  if (response.status !== call.status) {
    throw new Error(`${call.method} ${call.path} answered ${response.status}: ${JSON.stringify(body)}`);
  }
  return { ms, body };
}

/** Median latency of `samples` sequential calls after two untimed ones; `next` builds each call. */
async function medianLatency(baseUrl: string, next: () => Call, samples: number): Promise<number> {
  for (let warmup = 0; warmup < 2; warmup++) await send(baseUrl, next());
  const times: number[] = [];
  for (let sample = 0; sample < samples; sample++) times.push((await send(baseUrl, next())).ms);
  return median(times);
}

/** The endpoints' calls for one signed-up user, each call fresh where the endpoint consumes something. */
async function endpointCalls(baseUrl: string, apiKey: string) {
  const password = "round trips password";
  const apikey = { apikey: apiKey };
  let counter = 0;
  const unique = () => `rt-${Date.now()}-${counter++}@example.com`;
  const email = unique();
  const registered = await send(baseUrl, {
    path: "/auth/register",
    method: "POST",
    headers: apikey,
    body: { name: "Round Trips", email, password },
    status: 201,
  });
  const authorization = { authorization: String(registered.body.data?.accessToken) };
  const createCall = (): Call => ({
    path: "/notes-create",
    method: "POST",
    headers: authorization,
    body: { title: "Round trip" },
    status: 201,
  });
  const createNote = async () => String((await send(baseUrl, createCall())).body.data?.id);
  const saved = await createNote();
  const calls: Record<string, () => Call | Promise<Call>> = {
    "notes-create": createCall,
    "notes-fetch": () => ({ path: "/notes-fetch?limit=10", method: "GET", headers: authorization, status: 200 }),
    "notes-save": () => ({
      path: "/notes-save",
      method: "POST",
      headers: authorization,
      body: { id: saved, title: `Saved ${counter++}` },
      status: 200,
    }),
    "notes-delete": async () => ({
      path: `/notes-delete?id=${await createNote()}`,
      method: "DELETE",
      headers: authorization,
      status: 200,
    }),
    "auth/register": () => ({
      path: "/auth/register",
      method: "POST",
      headers: apikey,
      body: { name: "Round Trips", email: unique(), password },
      status: 201,
    }),
    "auth/login": () => ({
      path: "/auth/login",
      method: "POST",
      headers: apikey,
      body: { email, password },
      status: 200,
    }),
    "auth/request-password-reset": () => ({
      path: "/auth/request-password-reset",
      method: "POST",
      headers: apikey,
      body: { email },
      status: 200,
    }),
    // A wrong code runs the same single statement as a right one (app.reset_password), and can be repeated.
    "auth/create-password": () => ({
      path: "/auth/create-password",
      method: "POST",
      headers: apikey,
      body: { email, password, code: "000000" },
      status: 400,
    }),
  };
  return { calls, authorization, createCall };
}

/**
 * Measures every endpoint through `proxy` (which the stack at `baseUrl` uses
 * to reach Postgres) without and with a delay of `rttMs` per round trip.
 * Calls that need a fresh object (a note to delete) make it before the timer starts.
 */
export async function measureRoundTrips(
  baseUrl: string,
  proxy: TcpProxy,
  options: { apiKey: string; rttMs: number; samples: number },
): Promise<RoundTripRow[]> {
  const { calls } = await endpointCalls(baseUrl, options.apiKey);
  const rows: RoundTripRow[] = [];
  for (const [endpoint, build] of Object.entries(calls)) {
    // Prepared up front so that making a note to delete is not timed with the delete.
    const prepared: Call[] = [];
    for (let index = 0; index < options.samples + 2; index++) prepared.push(await build());
    const delayed: Call[] = [];
    for (let index = 0; index < options.samples + 2; index++) delayed.push(await build());
    proxy.delay(0);
    const directMs = await medianLatency(baseUrl, () => prepared.shift() as Call, options.samples);
    proxy.delay(options.rttMs / 2);
    let delayedMs: number;
    try {
      delayedMs = await medianLatency(baseUrl, () => delayed.shift() as Call, options.samples);
    } finally {
      proxy.delay(0);
    }
    rows.push({ endpoint, directMs, delayedMs, roundTrips: (delayedMs - directMs) / options.rttMs });
  }
  return rows;
}

/** First-page latency of a new 10-note user against `heavy` (sequential medians, no delay). */
export async function measureFirstPages(
  baseUrl: string,
  options: { apiKey: string; samples: number; heavy: { authorization: string; notes: number } },
): Promise<FirstPageCost> {
  const { authorization, createCall } = await endpointCalls(baseUrl, options.apiKey);
  const lightNotes = 10;
  // The endpoint calls made one note already.
  for (let index = 1; index < lightNotes; index++) await send(baseUrl, createCall());
  const firstPage = (headers: Record<string, string>) => (): Call => ({
    path: "/notes-fetch?limit=10&offset=0",
    method: "GET",
    headers,
    status: 200,
  });
  const heavyHeaders = { authorization: options.heavy.authorization };
  // Interleaved, so a change in the machine's load weighs on both alike.
  const light: number[] = [];
  const heavy: number[] = [];
  for (let round = 0; round < 3; round++) {
    light.push(await medianLatency(baseUrl, firstPage(authorization), options.samples));
    heavy.push(await medianLatency(baseUrl, firstPage(heavyHeaders), options.samples));
  }
  const lightMs = median(light);
  const heavyMs = median(heavy);
  return { lightNotes, heavyNotes: options.heavy.notes, lightMs, heavyMs, ratio: heavyMs / lightMs };
}
