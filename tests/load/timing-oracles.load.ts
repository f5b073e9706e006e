/**
 * A refusal tells nothing by its timing: whether an address has an account
 * cannot be read from how long a login, a reset or sign-in code request, a verification or a
 * refusal at a limit takes. Each test times hundreds of pairs, one request for
 * a known address and one for an unknown, and asks P(known slower) to stay
 * near 0.5 (`support/timing.ts`); a leak shows as 0.7 and more. The logins are
 * timed at the production bcrypt cost, where comparing a hash takes tens of
 * milliseconds. Too long for `npm test`, and quieter here, with no other suite's
 * load beside them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshAddress, type RegisteredUser, registerUser, uniqueEmail } from "../support/api.ts";
import { type ScratchStack, startScratchStack } from "../support/scratch-stack.ts";
import { shareKnownSlower } from "../support/timing.ts";

/** Noise from a busy machine rarely fails a share twice, a leak every time: so two retries. */
const measurement = { timeout: 120_000, retry: 2 };

function expectNearHalf(share: number) {
  expect(share, `P(known slower) = ${share}`).toBeGreaterThanOrEqual(0.4);
  expect(share, `P(known slower) = ${share}`).toBeLessThanOrEqual(0.6);
}

describe("with every request doing its whole work", () => {
  let stack: ScratchStack;
  let known: RegisteredUser;

  beforeAll(async () => {
    // The production bcrypt cost (BCRYPT_COST unset); the limits that would refuse hundreds of logins and reset
    // requests from one address are lifted.
    stack = await startScratchStack("timing_work", {
      env: {
        LOGIN_MAX_ATTEMPTS_PER_ADDRESS: "1000000",
        LOGIN_MAX_FAILURES_PER_EMAIL_AND_ADDRESS: "1000000",
        LOGIN_MAX_FAILURES_PER_ACCOUNT: "1000000",
        RESET_MAIL_MIN_INTERVAL_SECONDS: "0",
        RESET_MAILS_PER_HOUR: "1000000",
        RESET_REQUEST_MAX_PER_ADDRESS: "1000000",
        VERIFICATION_MAIL_MIN_INTERVAL_SECONDS: "0",
        VERIFICATION_MAILS_PER_DAY: "1000000",
      },
    });
    known = await registerUser("timed", { baseUrl: stack.baseUrl });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it(
    "a login for an unknown email takes as long as a wrong password: within 0.4-0.6 over 120 pairs",
    measurement,
    async () => {
      const refused = async (email: string) => {
        const response = await stack.call("/auth/login", { body: { email, password: "not the password" } });
        expect(response.status).toBe(401);
      };
      expectNearHalf(await shareKnownSlower(120, () => refused(known.email), () => refused(uniqueEmail("nobody"))));
    },
  );

  it(
    "a reset request takes as long for a known email as for an unknown one: within 0.4-0.6 over 200 pairs",
    measurement,
    async () => {
      const requested = async (email: string) => {
        const response = await stack.call("/auth/request-password-reset", { body: { email } });
        expect(response.status).toBe(200);
      };
      expectNearHalf(await shareKnownSlower(200, () => requested(known.email), () => requested(uniqueEmail("nobody"))));
    },
  );

  it(
    "a sign-in code request takes as long for a known email as for an unknown one: within 0.35-0.65 over 150 pairs",
    measurement,
    async () => {
      const requested = async (email: string) => {
        const response = await stack.call("/auth/otp", { body: { email } });
        expect(response.status).toBe(200);
      };
      const share = await shareKnownSlower(150, () => requested(known.email), () => requested(uniqueEmail("nobody")));
      expect(share, `P(known slower) = ${share}`).toBeGreaterThanOrEqual(0.35);
      expect(share, `P(known slower) = ${share}`).toBeLessThanOrEqual(0.65);
    },
  );
});

describe("refused at a per-address limit", () => {
  let stack: ScratchStack;

  beforeAll(async () => {
    // The production limits, each client with an address of its own (x-forwarded-for).
    stack = await startScratchStack("timing_limits", {
      env: { BCRYPT_COST: "4", TRUST_PROXY: "true", VERIFICATION_MAIL_MIN_INTERVAL_SECONDS: "0" },
    });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  const post = (path: string, body: unknown, address: string) =>
    stack.call(path, { body, headers: { "x-forwarded-for": address } });

  const bodies: Record<string, (email: string) => unknown> = {
    "/auth/login": (email) => ({ email, password: "a wrong password" }),
    "/auth/verify-email": (email) => ({ email, code: "123456", password: "a wrong password" }),
    "/auth/resend-verification": (email) => ({ email }),
  };

  for (const [path, body] of Object.entries(bodies)) {
    it(
      `${path} takes as long for a known address as for an unknown one: within 0.4-0.6 over 150 pairs`,
      measurement,
      async () => {
        const address = freshAddress();
        const known = await registerUser("timed-limit", { baseUrl: stack.baseUrl });
        // 30 calls a window from one address: the next are refused whoever they name.
        for (let call = 0; call < 30; call++) await post(path, body(uniqueEmail("filler")), address);
        const refused = async (email: string) => {
          expect((await post(path, body(email), address)).status).toBe(429);
        };
        expectNearHalf(await shareKnownSlower(150, () => refused(known.email), () => refused(uniqueEmail("nobody"))));
      },
    );
  }
});
