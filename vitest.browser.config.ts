import { defineConfig } from "vitest/config";

/** `npm run test:browser`: the demo app in headless Chromium, on one stack of its own. */
export default defineConfig({
  test: {
    include: ["tests/browser/**/*.e2e.ts"],
    globalSetup: ["tests/global-setup.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
