import { defineConfig } from "vitest/config";

/**
 * `npm run test:stress`: suites too long for `npm test`, each on a stack of its own: clients that never read their
 * answers (Debian's `slowhttptest`).
 */
export default defineConfig({
  test: {
    include: ["tests/stress/**/*.stress.ts"],
    testTimeout: 180_000,
    hookTimeout: 120_000,
  },
});
