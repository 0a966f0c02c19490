import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // End-to-end files start real processes; two cores run two files at a time at most.
    maxWorkers: 2,
  },
});
