import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    globalSetup: ["tests/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Three files at a time on two cores: most of a suite's time is spent waiting (on the stack, the database, a
    // timeout it provokes), so a third worker fills those waits. The shared stack serves them all, as it serves any
    // clients. Worker threads, not processes: a file starts in a thread at a fraction of a new process's cost.
    pool: "threads",
    fileParallelism: true,
    maxWorkers: 3,
    minWorkers: 1,
  },
});
