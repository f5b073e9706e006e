/**
 * A local peer that speaks Resend's `POST /emails` as the service calls it:
 * it checks the bearer key, records each accepted mail with its idempotency
 * key, and can be made to fail (as a provider outage does) and to answer
 * slowly, so tests see retries and concurrent drainers over real HTTP.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";

export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  idempotencyKey: string | undefined;
}

export interface FakeResend {
  /** Base URL for `RESEND_API_URL`. */
  url: string;
  apiKey: string;
  /** Mails accepted (answered 200), in order. */
  accepted: ReceivedMail[];
  /** Requests answered with an error status while failing. */
  refused: ReceivedMail[];
  /** Until `recover()`, every request is answered with `status`. */
  failWith(status: number): void;
  recover(): void;
  /** Every answer waits this long first. */
  delayMs: number;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = "";
    req.setEncoding("utf8").on("data", (chunk) => (body += chunk)).on("end", () => resolve(body)).on("error", reject);
  });
}

/** Starts the fake provider on a free loopback port. */
export async function startFakeResend(apiKey = "re_test_key"): Promise<FakeResend> {
  let failingStatus: number | undefined;
  const fake: FakeResend = {
    url: "",
    apiKey,
    accepted: [],
    refused: [],
    delayMs: 0,
    failWith: (status) => (failingStatus = status),
    recover: () => (failingStatus = undefined),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    await new Promise((resolve) => setTimeout(resolve, fake.delayMs));
    const answer = (status: number, payload: unknown) =>
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(payload));
    if (req.method !== "POST" || req.url !== "/emails") return answer(404, { message: "not found" });
    if (req.headers.authorization !== `Bearer ${apiKey}`) return answer(401, { message: "invalid API key" });
    const parsed = JSON.parse(body);
    const mail: ReceivedMail = {
      from: parsed.from,
      to: parsed.to,
      subject: parsed.subject,
      text: parsed.text,
      idempotencyKey: req.headers["idempotency-key"] as string | undefined,
    };
    if (failingStatus !== undefined) {
      fake.refused.push(mail);
      return answer(failingStatus, { message: "provider unavailable" });
    }
    fake.accepted.push(mail);
    answer(200, { id: crypto.randomUUID() });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return fake;
}
