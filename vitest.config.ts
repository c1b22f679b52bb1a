import { defineConfig } from "vitest/config";

// One vitest run covers every package; each project keeps its own config
// (the server's starts the embedded database once for all its files).
export default defineConfig({
  test: {
    projects: [
      "spec/vitest.config.ts",
      "packages/*/vitest.config.ts",
      "apps/*/vitest.config.ts",
      // The server's date-sensitive files again, 60 days ahead.
      "apps/server/vitest.later.config.ts",
      "test/vitest.config.ts",
      "test/repo/vitest.config.ts",
    ],
    // Two files at a time on CI's two cores: most of a file's time is spent waiting on servers,
    // receivers and timers rather than computing (vitest's default would be one: a worker fewer than
    // the cores). apps/server/vitest.config.ts names the same number (docs/development.md, "How it
    // is built": two files at a time).
    maxWorkers: 2,
    // The JSON report lets .ci/run print one plain "N passed, N failed" line.
    reporters: ["default", "json"],
    outputFile: { json: ".tmp/vitest-report.json" },
  },
});
