/**
 * One timed request of the API, as the benches that count round trips and
 * stream costs send it: its answer must have the status expected, so a broken
 * call is never timed as a fast one.
 *
 * @example
 * ```ts
 * const { ms } = await send(stack.baseUrl, { path: "/notes-fetch", method: "GET", headers, status: 200 });
 * ```
 */

/** One request of the API, relative to the stack's base URL. */
export interface Call {
  path: string;
  method: string;
  headers: Record<string, string>;
  body?: unknown;
  /** The status every answer must have, so a broken call is not timed as a fast one. */
  status: number;
}

/** Sends `call` and reads its JSON answer; throws when the status is not the one expected. */
export async function send(
  baseUrl: string,
  call: Call,
): Promise<{ ms: number; body: { data?: Record<string, unknown> } }> {
  const started = performance.now();
  const response = await fetch(`${baseUrl}${call.path}`, {
    method: call.method,
    headers: { ...call.headers, ...(call.body === undefined ? {} : { "content-type": "application/json" }) },
    body: call.body === undefined ? undefined : JSON.stringify(call.body),
    // A provider sign-in's start and callback answer a redirect: that answer is what is timed, not where it leads.
    redirect: "manual",
  });
  const text = await response.text();
  const body = text ? JSON.parse(text) : {};
  const ms = performance.now() - started;
  if (response.status !== call.status) {
    throw new Error(`${call.method} ${call.path} answered ${response.status}: ${JSON.stringify(body)}`);
  }
  return { ms, body };
}
