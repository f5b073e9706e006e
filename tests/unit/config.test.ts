import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../supabase/functions/_shared/config.ts";

const validSecret = "s".repeat(32);

/** An environment of `vars` on top of a minimal valid one; `undefined` removes a variable. */
function env(vars: Record<string, string | undefined> = {}) {
  const all: Record<string, string | undefined> = {
    JWT_SECRET: validSecret,
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
});
