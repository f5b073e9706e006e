/**
 * Auth behaviour that depends on state no endpoint sets: a suspended account
 * and an expired reset code, both set with SQL as an operator (or the clock)
 * would. Also what the database keeps (hashes only) and that Postgres does no
 * bcrypt work for a login. That a login for an unknown email takes as long as
 * a wrong password is measured in `load/login-timing.load.ts`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { completeLogin, passwordAttempt } from "../supabase/functions/_shared/queries/accounts.ts";
import { loadConfig } from "../supabase/functions/_shared/config/mod.ts";
import { call, countResetMails, readResetCode, type RegisteredUser, registerUser } from "./support/api.ts";
import { expectAuthError, expectSession } from "./support/auth.ts";
import { type ScratchStack, startScratchStack } from "./support/scratch-stack.ts";

/** The suite stack's bcrypt cost: not the default, so the stored hash shows the setting was applied. */
const bcryptCost = 5;
const newPassword = "a brand new passphrase";

interface StoredSecrets {
  passwordHash: string;
  codeHash: string;
  /** Bodies of the mails to the user in the outbox, all delivered by now. */
  mailBodies: (string | null)[];
}

interface BcryptCalls {
  crypt: number;
  genSalt: number;
}

/** How often a login's statements call crypt() and gen_salt() in Postgres, counted by Postgres itself. */
async function bcryptCallsOfLogin(sql: ScratchStack["sql"], email: string): Promise<BcryptCalls> {
  return await sql.begin(async (tx) => {
    await tx`set local track_functions = 'all'`;
    // The view also shows this session's counts not yet flushed from earlier transactions, so take the difference.
    const counts = async (): Promise<BcryptCalls> => {
      const rows = await tx<{ proname: string; calls: number }[]>`
        select p.proname, s.calls::int as calls
        from pg_stat_xact_user_functions s join pg_proc p on p.oid = s.funcid
        where p.proname in ('crypt', 'gen_salt')`;
      const calls = (name: string) => rows.find((row) => row.proname === name)?.calls ?? 0;
      return { crypt: calls("crypt"), genSalt: calls("gen_salt") };
    };
    const before = await counts();
    const { limits, sessions } = loadConfig(new Map(Object.entries(minimalEnv)));
    const attempt = passwordAttempt({ email, address: undefined, userAgent: undefined, limits });
    await tx.unsafe(attempt.text, attempt.values as string[]);
    const [[user]] = [
      await tx<{ id: string; password_hash: string }[]>`
      select id, password_hash from app.users where email = ${email}`,
    ];
    const session = { settings: sessions, userAgent: undefined, address: undefined };
    const complete = completeLogin({ userId: user.id, passwordHash: user.password_hash, address: undefined, session });
    await tx.unsafe(complete.text, complete.values as string[]);
    const after = await counts();
    return { crypt: after.crypt - before.crypt, genSalt: after.genSalt - before.genSalt };
  }) as BcryptCalls;
}

/** Just enough settings for `loadConfig`, to build the statements a login sends. */
const minimalEnv = {
  DATABASE_URL: "postgresql://unused",
  JWT_SECRET: "a-secret-of-at-least-thirty-two-bytes!!",
  MFA_SECRET_KEY: "a-second-factor-key-of-at-least-32-bytes",
  SUPABASE_ANON_KEY: "unused",
};

describe("account states set in the database", () => {
  let stack: ScratchStack;
  let suspended: RegisteredUser;
  let suspendedCode: string;
  let expiring: RegisteredUser;
  let expiredCode: string;
  let stored: StoredSecrets;
  let loginCalls: BcryptCalls;

  beforeAll(async () => {
    stack = await startScratchStack("account_states", { env: { BCRYPT_COST: String(bcryptCost) } });
    const baseUrl = stack.baseUrl;
    suspended = await registerUser("suspended", { baseUrl });
    expiring = await registerUser("expiring", { baseUrl });
    for (const user of [suspended, expiring]) {
      const before = countResetMails(user.email, stack.logFile);
      expect((await call("/auth/request-password-reset", { body: { email: user.email }, baseUrl })).status).toBe(200);
      const code = await readResetCode(user.email, before, stack.logFile);
      if (user === suspended) suspendedCode = code;
      else expiredCode = code;
    }

    {
      const { sql } = stack;
      await sql`update app.users set status = 'SUSPENDED' where email = ${suspended.email}`;
      // As if the 15 minutes had passed.
      await sql`
        update app.password_reset_codes set expires_at = now() - interval '1 second'
        where user_id = ${expiring.id}`;
      const [secrets] = await sql<{ password_hash: string; code_hash: string }[]>`
        select u.password_hash, c.code_hash
        from app.users u join app.password_reset_codes c on c.user_id = u.id
        where u.id = ${suspended.id}`;
      const outbox = await sql<{ body: string | null }[]>`
        select body from app.mail_outbox where recipient = ${suspended.email} order by id`;
      stored = {
        passwordHash: secrets.password_hash,
        codeHash: secrets.code_hash,
        mailBodies: outbox.map((mail) => mail.body),
      };
      loginCalls = await bcryptCallsOfLogin(sql, expiring.email);
    }
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
  });

  it("answers 403 to a suspended account's right password", async () => {
    const response = await call("/auth/login", {
      body: { email: suspended.email, password: suspended.password },
      baseUrl: stack.baseUrl,
    });
    expect(expectAuthError(response, 403).message).toMatch(/suspended/i);
  });

  it("answers 401 to a suspended account's wrong password, so a guess learns nothing of the status", async () => {
    const response = await call("/auth/login", {
      body: { email: suspended.email, password: "not the password" },
      baseUrl: stack.baseUrl,
    });
    expectAuthError(response, 401);
  });

  it("gives a suspended account no token, and no new password, through a reset code either", async () => {
    const response = await call("/auth/create-password", {
      body: { email: suspended.email, password: newPassword, code: suspendedCode },
      baseUrl: stack.baseUrl,
    });
    expect(expectAuthError(response, 403).message).toMatch(/suspended/i);
    const withNewPassword = await call("/auth/login", {
      body: { email: suspended.email, password: newPassword },
      baseUrl: stack.baseUrl,
    });
    expectAuthError(withNewPassword, 401);
  });

  it("answers 400 to an expired code and leaves the password alone", async () => {
    const expired = await call("/auth/create-password", {
      body: { email: expiring.email, password: newPassword, code: expiredCode },
      baseUrl: stack.baseUrl,
    });
    expect(expectAuthError(expired, 400).message).toBe("Invalid or expired code");
    expectSession(
      await call("/auth/login", {
        body: { email: expiring.email, password: expiring.password },
        baseUrl: stack.baseUrl,
      }),
      200,
    );
  });

  it("stores passwords as bcrypt hashes at the configured cost, codes as keyed hashes, and clears delivered mail bodies", () => {
    expect(stored.passwordHash).toMatch(new RegExp(`^\\$2[abxy]\\$${String(bcryptCost).padStart(2, "0")}\\$.{53}$`));
    expect(stored.passwordHash).not.toContain(suspended.password);
    // An HMAC-SHA256 made by the function (hex): Postgres hashes nothing.
    expect(stored.codeHash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored.codeHash).not.toContain(suspendedCode);
    // The sign-up's verification mail and the reset mail, both delivered.
    expect(stored.mailBodies).toEqual([null, null]);
  });

  it("runs no bcrypt in Postgres for a login: the function checks the password", () => {
    expect(loginCalls).toEqual({ crypt: 0, genSalt: 0 });
  });
});
