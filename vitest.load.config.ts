import { defineConfig } from "vitest/config";

/**
 * `npm run test:load`: suites that load a stack on purpose, each on a stack of its own, too long or too heavy for
 * `npm test`: floods of slow connections and of logins, clients that never read their answers (Debian's
 * `slowhttptest`), and timing measured over hundreds of requests at the production bcrypt cost. They run one at a
 * time, so no suite's load falls on another's measurements.
 */
export default defineConfig({
  test: {
    include: ["tests/load/**/*.load.ts"],
    testTimeout: 180_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
