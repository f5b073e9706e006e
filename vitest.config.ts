import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    globalSetup: ["tests/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Suites share one stack; on PGlite it serves one connection, so files run one at a time.
    fileParallelism: false,
  },
});
