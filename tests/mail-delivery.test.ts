/**
 * Reset mails delivered by the service itself through the provider's API, on a
 * stack of this suite's own pointed at a local peer that speaks Resend's API:
 * one delivery per mail carrying a code that works, retries while the provider
 * is down, concurrent drainers that still send each mail once, and logs that
 * never carry a code outside the local stack's own `[mail]` print lines.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anonKey, call, registerUser } from "./support/api.ts";
import { expectSession } from "./support/auth.ts";
import { type FakeResend, type ReceivedMail, startFakeResend } from "./support/fake-resend.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";
import { sharedStackLimits } from "../dev/harness/stack.ts";

const mailFrom = "Notes <no-reply@notes.example>";
const dispatchSecret = "mail-dispatch-secret-of-at-least-32-bytes";
const withDispatchSecret = { authorization: `Bearer ${dispatchSecret}` };

let provider: FakeResend;
let stack: ScratchStack;

beforeAll(async () => {
  provider = await startFakeResend();
  stack = await startScratchStack("notes_mail", {
    env: {
      ...sharedStackLimits,
      RESEND_API_KEY: provider.apiKey,
      MAIL_FROM: mailFrom,
      RESEND_API_URL: provider.url,
      MAIL_DISPATCH_SECRET: dispatchSecret,
    },
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await provider?.close();
});

async function until<T>(
  find: () => T | undefined | Promise<T | undefined>,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const codeIn = (text: string) => /code is (\d{6})/.exec(text)?.[1];
const resetSubject = "Your password reset code";
/** The mails of `list` to `email` with `subject`: by default the reset mails, not the sign-up's verification mail. */
const mailsTo = (list: ReceivedMail[], email: string, subject = resetSubject) =>
  list.filter((mail) => mail.to.includes(email) && mail.subject === subject);

async function requestReset(email: string) {
  const response = await call("/auth/request-password-reset", { body: { email }, baseUrl: stack.baseUrl });
  expect(response.status, response.text).toBe(200);
}

describe("the verification mail through the provider", () => {
  it("delivers the sign-up's code, which verify-email accepts", async () => {
    const user = await registerUser("verified", { baseUrl: stack.baseUrl });
    const [mail] = await until(() => {
      const found = mailsTo(provider.accepted, user.email, "Confirm your email address");
      return found.length > 0 ? found : undefined;
    }, "the verification mail at the provider");
    expect(mail).toMatchObject({ from: mailFrom, to: [user.email] });
    const verified = expectSession(
      await call("/auth/verify-email", {
        body: { email: user.email, code: codeIn(mail.text) },
        token: user.accessToken,
        baseUrl: stack.baseUrl,
      }),
      200,
    );
    expect(verified.payload.isVerified).toBe(true);
  });
});

describe("reset mails through the provider", () => {
  it("delivers exactly one mail with a code that create-password accepts", async () => {
    const user = await registerUser("mailed", { baseUrl: stack.baseUrl });
    await requestReset(user.email);
    const [mail] = await until(() => {
      const found = mailsTo(provider.accepted, user.email);
      return found.length > 0 ? found : undefined;
    }, "the mail at the provider");
    expect(mail).toMatchObject({ from: mailFrom, to: [user.email], subject: "Your password reset code" });
    expect(mail.idempotencyKey).toMatch(/^notes-outbox-\d+$/);
    const code = codeIn(mail.text);
    expect(code).toMatch(/^\d{6}$/);
    expectSession(
      await call("/auth/create-password", {
        body: { email: user.email, password: "a brand new passphrase", code },
        baseUrl: stack.baseUrl,
      }),
      200,
    );
    // Several more drains later, still one delivery.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(mailsTo(provider.accepted, user.email)).toHaveLength(1);
  });

  it("keeps a mail queued while the provider is down and delivers it once it is back", async () => {
    const user = await registerUser("outage", { baseUrl: stack.baseUrl });
    provider.failWith(503);
    try {
      await requestReset(user.email);
      await until(() => mailsTo(provider.refused, user.email).at(0), "a refused attempt");
      // Not retried at once: the backoff holds the mail for 15 s after a failed attempt.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(mailsTo(provider.refused, user.email)).toHaveLength(1);
      expect(mailsTo(provider.accepted, user.email)).toHaveLength(0);
    } finally {
      provider.recover();
    }
    // As if the 15 s of backoff had passed: the next drain retries it.
    await stack.sql`
      update app.mail_outbox set next_attempt_at = now() where recipient = ${user.email} and sent_at is null`;
    const [delivered] = await until(
      () => {
        const found = mailsTo(provider.accepted, user.email);
        return found.length > 0 ? found : undefined;
      },
      "the retried mail",
    );
    expect(delivered.idempotencyKey).toBe(mailsTo(provider.refused, user.email)[0].idempotencyKey);
    expectSession(
      await call("/auth/create-password", {
        body: { email: user.email, password: "a brand new passphrase", code: codeIn(delivered.text) },
        baseUrl: stack.baseUrl,
      }),
      200,
    );
    expect(readFileSync(stack.logFile, "utf8")).toMatch(/"event":"mail delivery failed; will retry"/);
  });

  it("sends each mail once while several drainers run at the same time", async () => {
    provider.delayMs = 200;
    try {
      const emails = await Promise.all(
        Array.from(
          { length: 12 },
          async (_, index) => (await registerUser(`drained-${index}`, { baseUrl: stack.baseUrl })).email,
        ),
      );
      await Promise.all(emails.map(requestReset));
      // Eight callers of mail-dispatch race the stack's own mail loop for the same due mails.
      const dispatches = await Promise.all(
        Array.from(
          { length: 8 },
          () => call("/mail-dispatch", { body: {}, headers: withDispatchSecret, baseUrl: stack.baseUrl }),
        ),
      );
      for (const response of dispatches) expect(response.status, response.text).toBe(200);
      await until(
        () => emails.every((email) => mailsTo(provider.accepted, email).length > 0) || undefined,
        "every mail at the provider",
      );
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      for (const email of emails) expect(mailsTo(provider.accepted, email), email).toHaveLength(1);
      const keys = provider.accepted.map((mail) => mail.idempotencyKey);
      expect(new Set(keys).size).toBe(keys.length);
    } finally {
      provider.delayMs = 0;
    }
  });

  it("refuses mail-dispatch with the public apikey alone, or a wrong secret, or the secret without the apikey", async () => {
    const dispatch = (request: { apiKey?: null; headers?: Record<string, string> }) =>
      call("/mail-dispatch", { body: {}, baseUrl: stack.baseUrl, ...request });
    expect((await dispatch({})).status).toBe(401);
    expect((await dispatch({ headers: { authorization: `Bearer ${dispatchSecret}x` } })).status).toBe(401);
    expect((await dispatch({ headers: { authorization: `Bearer ${anonKey}` } })).status).toBe(401);
    expect((await dispatch({ apiKey: null, headers: withDispatchSecret })).status).toBe(401);
    expect((await dispatch({ headers: withDispatchSecret })).status).toBe(200);
  });

  it("writes no code to any log line but the local stack's own [mail] lines", async () => {
    const { email } = await registerUser("quiet", { baseUrl: stack.baseUrl });
    await requestReset(email);
    const mail = await until(() => mailsTo(provider.accepted, email).at(0), "the mail");
    const code = codeIn(mail.text) ?? "";
    const log = await until(() => {
      const text = readFileSync(stack.logFile, "utf8");
      return text.includes(`[mail] to=${email}`) ? text : undefined;
    }, "the printed mail");
    const otherLines = log.split("\n").filter((line) => !line.startsWith("[mail] "));
    // The code as a whole number: the same six digits inside a request id are not a leak.
    const codePattern = new RegExp(`(?<![0-9A-Za-z])${code}(?![0-9A-Za-z])`);
    expect(otherLines.filter((line) => codePattern.test(line) || line.includes(email))).toEqual([]);
  });

  it("gives a mail up after its last allowed attempt: marked failed, body cleared, logged without it", async () => {
    const user = await registerUser("given-up", { baseUrl: stack.baseUrl });
    provider.failWith(500);
    try {
      await requestReset(user.email);
      await until(() => mailsTo(provider.refused, user.email).at(0), "a refused attempt");
      // Eight attempts have failed; the ninth and last is due now.
      await stack.sql`
        update app.mail_outbox set attempts = 8, next_attempt_at = now()
        where recipient = ${user.email} and subject = ${resetSubject}`;
      const [mail] = await until(async () => {
        const rows = await stack.sql<{ failed_at: Date | null; body: string | null; last_error: string }[]>`
          select failed_at, body, last_error from app.mail_outbox
          where recipient = ${user.email} and subject = ${resetSubject}`;
        return rows[0]?.failed_at ? rows : undefined;
      }, "the mail given up");
      expect(mail).toMatchObject({ body: null, last_error: "HTTP 500" });
    } finally {
      provider.recover();
    }
    // The stack writes its log a few milliseconds after the fact, so the line is waited for.
    const givenUpLines = () =>
      readFileSync(stack.logFile, "utf8").split("\n").filter((line) => line.includes("mail given up"));
    const [givenUp] = await until(() => givenUpLines().length > 0 ? givenUpLines() : undefined, "the log line");
    expect(givenUp).toMatch(/"mailId":"\d+","attempt":9/);
    expect(givenUp).not.toContain(user.email);
    // Not retried any more, and given up once.
    const refusedSoFar = mailsTo(provider.refused, user.email).length;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(givenUpLines()).toHaveLength(1);
    expect(mailsTo(provider.refused, user.email)).toHaveLength(refusedSoFar);
    expect(mailsTo(provider.accepted, user.email)).toHaveLength(0);
  });
});
