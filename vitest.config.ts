import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // End-to-end files start real processes; two cores run two files at a time at most.
    maxWorkers: 2,
    // The JSON report lets .ci/run print a plain "N passed, N failed" line.
    reporters: ["default", "json"],
    outputFile: { json: ".vitest-results.json" },
  },
});
