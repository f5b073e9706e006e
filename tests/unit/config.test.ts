import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  allowsPasskeyOrigin,
  ConfigError,
  databaseIntegerSettings,
  integerSettings,
  isAllowedRedirect,
  loadConfig,
  type SettingSink,
  sqlIntegerMax,
  timerDelayMaxMs,
} from "../../supabase/functions/_shared/config/mod.ts";
import { stackIntegerSettings } from "../../dev/settings.ts";
import { anonymousNoteLimitFrom } from "../../dev/database-settings.ts";

const validSecret = "s".repeat(32);

/** An environment of `vars` on top of a minimal valid one; `undefined` removes a variable. */
function env(vars: Record<string, string | undefined> = {}) {
  const all: Record<string, string | undefined> = {
    JWT_SECRET: validSecret,
    MFA_SECRET_KEY: "m".repeat(32),
    SUPABASE_ANON_KEY: "anon-key",
    DATABASE_URL: "postgresql://db.example/postgres",
    ...vars,
  };
  return { get: (name: string) => all[name] };
}

function configError(vars: Record<string, string | undefined>): string {
  try {
    loadConfig(env(vars));
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(vars)}`);
}

describe("loadConfig", () => {
  it("reads a valid environment with its documented defaults", () => {
    const config = loadConfig(env());
    expect(new TextDecoder().decode(config.jwtSecret)).toBe(validSecret);
    expect([...config.apiKeys]).toEqual(["anon-key"]);
    expect(config.databaseUrl).toBe("postgresql://db.example/postgres");
    expect(config.bcryptCost).toBe(10);
    expect(config.dbPoolMax).toBe(5);
    expect(config.statementTimeoutMs).toBe(5_000);
  });

  describe("JWT_SECRET", () => {
    it("is required", () => {
      expect(configError({ JWT_SECRET: undefined })).toMatch(/JWT_SECRET is not set/);
      expect(configError({ JWT_SECRET: "" })).toMatch(/JWT_SECRET is not set/);
    });

    it("needs 32 bytes, counted in UTF-8", () => {
      expect(configError({ JWT_SECRET: "short" })).toBe("JWT_SECRET is 5 bytes; HS256 needs at least 32");
      expect(configError({ JWT_SECRET: "s".repeat(31) })).toMatch(/31 bytes/);
      // 16 two-byte characters: 16 characters but 32 bytes.
      expect(loadConfig(env({ JWT_SECRET: "é".repeat(16) })).jwtSecret.length).toBe(32);
    });

    it("refuses surrounding whitespace rather than trimming it silently", () => {
      for (const secret of [` ${validSecret}`, `${validSecret}\n`, `\t${validSecret}`]) {
        expect(configError({ JWT_SECRET: secret })).toBe(
          "JWT_SECRET has leading or trailing whitespace; set it without",
        );
      }
    });

    it("refuses a secret of whitespace only", () => {
      expect(configError({ JWT_SECRET: " ".repeat(40) })).toMatch(/whitespace/);
    });
  });

  describe("MFA_SECRET_KEY", () => {
    it("is required, of 32 bytes at least", () => {
      expect(configError({ MFA_SECRET_KEY: undefined })).toMatch(/MFA_SECRET_KEY is not set/);
      expect(configError({ MFA_SECRET_KEY: "short" })).toBe(
        "MFA_SECRET_KEY is 5 bytes; sealing them needs at least 32",
      );
    });

    it("is refused when it is JWT_SECRET: whoever holds one must not hold both", () => {
      expect(configError({ MFA_SECRET_KEY: validSecret })).toBe(
        "MFA_SECRET_KEY must not be JWT_SECRET: set a key of its own",
      );
    });
  });

  describe("api keys", () => {
    it("accept the anon key and every publishable key of the JSON object", () => {
      const config = loadConfig(
        env({ SUPABASE_PUBLISHABLE_KEYS: '{"default":"sb_publishable_a","web":"sb_publishable_b"}' }),
      );
      expect([...config.apiKeys].sort()).toEqual(["anon-key", "sb_publishable_a", "sb_publishable_b"]);
    });

    it("may come from publishable keys alone", () => {
      const config = loadConfig(
        env({ SUPABASE_ANON_KEY: undefined, SUPABASE_PUBLISHABLE_KEYS: '{"default":"sb_publishable_a"}' }),
      );
      expect([...config.apiKeys]).toEqual(["sb_publishable_a"]);
    });

    it("ignore empty and non-string entries", () => {
      const config = loadConfig(env({ SUPABASE_PUBLISHABLE_KEYS: '{"a":"","b":7,"c":null,"d":"sb_publishable_d"}' }));
      expect([...config.apiKeys].sort()).toEqual(["anon-key", "sb_publishable_d"]);
    });

    it("refuse publishable keys that are not a JSON object", () => {
      for (const value of ["sb_publishable_a", "{broken", "null", '"sb_publishable_a"', "42"]) {
        expect(configError({ SUPABASE_PUBLISHABLE_KEYS: value })).toBe(
          "SUPABASE_PUBLISHABLE_KEYS must be a JSON object of keys",
        );
      }
    });

    it("must exist in one form or the other", () => {
      expect(configError({ SUPABASE_ANON_KEY: undefined })).toBe(
        "Neither SUPABASE_ANON_KEY nor SUPABASE_PUBLISHABLE_KEYS is set",
      );
      expect(configError({ SUPABASE_ANON_KEY: "", SUPABASE_PUBLISHABLE_KEYS: "{}" })).toMatch(/Neither/);
    });
  });

  describe("database", () => {
    it("prefers DATABASE_URL over SUPABASE_DB_URL", () => {
      const both = loadConfig(env({ SUPABASE_DB_URL: "postgresql://direct/postgres" }));
      expect(both.databaseUrl).toBe("postgresql://db.example/postgres");
      const direct = loadConfig(env({ DATABASE_URL: undefined, SUPABASE_DB_URL: "postgresql://direct/postgres" }));
      expect(direct.databaseUrl).toBe("postgresql://direct/postgres");
    });

    it("needs one of them", () => {
      expect(configError({ DATABASE_URL: undefined })).toBe("Neither DATABASE_URL nor SUPABASE_DB_URL is set");
    });
  });

  it("validates integer settings with their range in the message", () => {
    expect(configError({ BCRYPT_COST: "3" })).toBe('BCRYPT_COST must be an integer from 4 to 15, got "3"');
    expect(configError({ BCRYPT_COST: "ten" })).toMatch(/BCRYPT_COST must be an integer/);
    expect(configError({ DB_POOL_MAX: "1.5" })).toMatch(/DB_POOL_MAX must be an integer from 1 to 100/);
    expect(loadConfig(env({ BCRYPT_COST: "12" })).bcryptCost).toBe(12);
  });

  it("refuses a session timeout a SQL integer cannot hold, naming the setting and its range", () => {
    for (
      const name of ["SESSION_IDLE_TIMEOUT_SECONDS", "SESSION_MAX_LIFETIME_SECONDS", "SESSION_REFRESH_GRACE_SECONDS"]
    ) {
      expect(configError({ [name]: "3000000000" })).toBe(
        `${name} must be an integer from 1 to 2147483647, got "3000000000"`,
      );
    }
    expect(loadConfig(env({ SESSION_IDLE_TIMEOUT_SECONDS: "2147483647" })).sessions.idleTimeoutSeconds).toBe(
      2_147_483_647,
    );
  });
});

describe("provider sign-in settings", () => {
  const google = {
    OIDC_PROVIDERS: "google",
    OIDC_GOOGLE_ISSUER: "https://accounts.google.com",
    OIDC_GOOGLE_CLIENT_ID: "client-id",
    OIDC_GOOGLE_CLIENT_SECRET: "client-secret",
    OAUTH_REDIRECT_URLS: "https://app.example/auth/callback, http://localhost:5173/",
    SUPABASE_URL: "https://ref.supabase.co",
  };

  it("is off without OIDC_PROVIDERS", () => {
    const { providerSignIn } = loadConfig(env());
    expect(providerSignIn.providers.size).toBe(0);
    expect(providerSignIn.callbackUrl).toBeUndefined();
  });

  it("reads each provider, and the callback under SUPABASE_URL unless FUNCTIONS_URL says otherwise", () => {
    const { providerSignIn } = loadConfig(env(google));
    expect(providerSignIn.providers.get("google")).toMatchObject({
      clientId: "client-id",
      clientSecret: "client-secret",
    });
    expect(providerSignIn.callbackUrl).toBe("https://ref.supabase.co/functions/v1/auth/oauth/callback");
    expect(
      loadConfig(env({ ...google, FUNCTIONS_URL: "http://127.0.0.1:54321/functions/v1/" })).providerSignIn.callbackUrl,
    )
      .toBe("http://127.0.0.1:54321/functions/v1/auth/oauth/callback");
  });

  it("refuses what would break a sign-in, naming the setting", () => {
    expect(configError({ ...google, OIDC_GOOGLE_CLIENT_SECRET: undefined })).toMatch(/OIDC_GOOGLE_CLIENT_SECRET/);
    expect(configError({ ...google, OIDC_PROVIDERS: "Google" })).toMatch(/OIDC_PROVIDERS/);
    expect(configError({ ...google, OIDC_GOOGLE_ISSUER: "http://idp.local" })).toMatch(/OIDC_ALLOW_HTTP/);
    expect(loadConfig(env({ ...google, OIDC_GOOGLE_ISSUER: "http://idp.local", OIDC_ALLOW_HTTP: "true" })))
      .toBeTruthy();
    expect(configError({ ...google, OAUTH_REDIRECT_URLS: undefined })).toMatch(/OAUTH_REDIRECT_URLS/);
    expect(configError({ ...google, OAUTH_REDIRECT_URLS: "app.example/callback" })).toMatch(/OAUTH_REDIRECT_URLS/);
    expect(configError({ ...google, SUPABASE_URL: undefined })).toMatch(/FUNCTIONS_URL/);
  });

  it("sends the browser back only to a listed app URL, exactly, query included", () => {
    const allowed = [new URL("https://app.example/auth/callback"), new URL("https://app.example/in?next=%2Fnotes")];
    expect(isAllowedRedirect("https://app.example/auth/callback", allowed)).toBe(true);
    expect(isAllowedRedirect("https://app.example/in?next=%2Fnotes", allowed)).toBe(true);
    for (
      const refused of [
        "https://app.example/auth/callback?next=%2Fnotes",
        "https://app.example/auth/callback?",
        "https://app.example/in?next=%2Fadmin",
        "https://app.example/in?next=%2Fnotes&code=planted",
        "https://APP.example/auth/callback",
        "https://app.example/auth/callback#x",
        "https://app.example/auth/callback/../admin",
        "https://app.example/auth/other",
        "https://app.example.evil.example/auth/callback",
        "http://app.example/auth/callback",
        "https://user:pass@app.example/auth/callback",
        "https://app.example:8443/auth/callback",
        "//app.example/auth/callback",
        "javascript:alert(1)",
      ]
    ) {
      expect(isAllowedRedirect(refused, allowed), refused).toBe(false);
    }
  });
});

describe("passkey settings", () => {
  it("default to localhost on any port over http, as browsers allow, and never an IP address", () => {
    const { passkeys } = loadConfig(env());
    expect(passkeys).toEqual({ rpId: "localhost", rpName: "Notes", origins: [] });
    expect(allowsPasskeyOrigin(passkeys, "http://localhost:5173")).toBe(true);
    expect(allowsPasskeyOrigin(passkeys, "http://localhost:4000")).toBe(true);
    expect(allowsPasskeyOrigin(passkeys, "http://127.0.0.1:5173")).toBe(false);
    expect(allowsPasskeyOrigin(passkeys, "https://evil.example")).toBe(false);
    expect(configError({ PASSKEY_RP_ID: "127.0.0.1" })).toMatch(/PASSKEY_RP_ID must be a host name/);
  });

  it("need the app's origins on a hosted relying party, each on it or a subdomain, over https", () => {
    expect(configError({ PASSKEY_RP_ID: "notes.example" })).toMatch(/PASSKEY_ORIGINS is not set/);
    expect(configError({ PASSKEY_RP_ID: "notes.example", PASSKEY_ORIGINS: "https://other.example" })).toMatch(
      /not on PASSKEY_RP_ID/,
    );
    expect(configError({ PASSKEY_RP_ID: "notes.example", PASSKEY_ORIGINS: "http://app.notes.example" })).toMatch(
      /must be https/,
    );
    expect(configError({ PASSKEY_RP_ID: "notes.example", PASSKEY_ORIGINS: "https://notes.example/app" })).toMatch(
      /origin alone/,
    );
    const { passkeys } = loadConfig(
      env({ PASSKEY_RP_ID: "notes.example", PASSKEY_ORIGINS: "https://notes.example, https://app.notes.example/" }),
    );
    expect(passkeys.origins).toEqual(["https://notes.example", "https://app.notes.example"]);
    expect(allowsPasskeyOrigin(passkeys, "https://app.notes.example")).toBe(true);
    expect(allowsPasskeyOrigin(passkeys, "https://evil.notes.example")).toBe(false);
  });
});

describe("integer settings", () => {
  const ceilings: Record<SettingSink, number> = {
    sql: sqlIntegerMax,
    timer: timerDelayMaxMs,
    memory: Number.MAX_SAFE_INTEGER,
  };
  const settings = Object.entries({ ...integerSettings, ...stackIntegerSettings, ...databaseIntegerSettings });

  it("have maxima that every place their value goes can take", () => {
    expect(sqlIntegerMax).toBe(2 ** 31 - 1);
    expect(timerDelayMaxMs).toBe(2 ** 31 - 1);
    for (const [name, { min, max, fallback, sinks }] of settings) {
      expect(sinks.length, name).toBeGreaterThan(0);
      for (const sink of sinks) expect(max, `${name} into ${sink}`).toBeLessThanOrEqual(ceilings[sink]);
      expect(fallback, name).toBeGreaterThanOrEqual(min);
      expect(fallback, name).toBeLessThanOrEqual(max);
    }
  });

  it("each refuse a value past either end of its range, naming the setting and the range", () => {
    for (const [name, { min, max }] of Object.entries(integerSettings)) {
      for (const value of [min - 1, max + 1]) {
        expect(configError({ [name]: String(value) })).toBe(
          `${name} must be an integer from ${min} to ${max}, got "${value}"`,
        );
      }
      expect(() => loadConfig(env({ [name]: String(max) }))).not.toThrow();
    }
  });

  it("that Postgres enforces are read in their range, and left to the database when unset", () => {
    const { min, max } = databaseIntegerSettings.ANONYMOUS_NOTE_LIMIT;
    const read = (value: string | undefined) => anonymousNoteLimitFrom(new Map([["ANONYMOUS_NOTE_LIMIT", value]]));
    expect(read(undefined)).toBeUndefined();
    expect(read("")).toBeUndefined();
    expect(read(String(max))).toBe(max);
    expect(read("0")).toBe(0);
    for (const value of [min - 1, max + 1, 2.5]) {
      expect(() => read(String(value))).toThrow(
        `ANONYMOUS_NOTE_LIMIT must be an integer from ${min} to ${max}, got "${value}"`,
      );
    }
  });

  it("are listed with their ranges in docs/configuration.md", () => {
    const docs = readFileSync(new URL("../../docs/configuration.md", import.meta.url), "utf8");
    const ranges = docs.slice(docs.indexOf("## Ranges"));
    const documented = [...ranges.matchAll(/^\| `([A-Z_]+)` \| (\d+) to (\d+) \|/gm)].map((row) => [
      row[1],
      Number(row[2]),
      Number(row[3]),
    ]);
    expect(documented).toEqual(settings.map(([name, { min, max }]) => [name, min, max]));
  });
});
