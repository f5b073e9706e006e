/**
 * Structured request logs: one JSON line per request. Only these fields are
 * logged, never bodies or headers, so no password, code, token or key can leak.
 */
export interface RequestLogLine {
  requestId: string;
  function: string;
  method: string;
  status: number;
  durationMs: number;
}

/** An error as a log line states it: its class and message, never its stack or its cause. */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** Writes one request's log line. */
export function logRequest(line: RequestLogLine): void {
  const { requestId, function: name, method, status, durationMs } = line;
  // One literal rather than a spread: the line is built on every request.
  console.log(JSON.stringify({ level: "info", requestId, function: name, method, status, durationMs }));
}
