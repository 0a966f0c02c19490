import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // End-to-end files start real processes; two cores run two files at a time at most.
    maxWorkers: 2,
    // The JSON report lets .ci/run print a plain "N passed, N failed" line.
    reporters: ["default", "json"],
    outputFile: { json: ".vitest-results.json" },
    projects: [
      {
        extends: true,
        test: {
          name: "fast",
          include: ["test/unit/**/*.test.ts", "test/in-process/**/*.test.ts"],
          // Importing the SDK and the core once per worker instead of once per file was most of this tier's
          // time (about 70 of 90 s on a busy machine); these files start no process and restore what they touch.
          pool: "threads",
          isolate: false,
          // Before the end-to-end files: the fast tier's answer comes first, and its workers end before those start.
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          // Child processes, signals and process.on("exit") cleanup want a process, not a thread. One process per
          // worker for all its files (not one per file): each file cleans up what it starts (helpers/harness.ts),
          // and the SDK, undici and oidc-provider are then imported twice per run instead of once per file.
          pool: "forks",
          isolate: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
