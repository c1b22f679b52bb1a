import { defineConfig } from "vitest/config";

// One vitest run covers every package; each project keeps its own config
// (the server's starts the embedded database once for all its files).
export default defineConfig({
  test: {
    projects: [
      "spec/vitest.config.ts",
      "packages/*/vitest.config.ts",
      "apps/*/vitest.config.ts",
      "test/vitest.config.ts",
      "test/repo/vitest.config.ts",
    ],
    // The JSON report lets .ci/run print one plain "N passed, N failed" line.
    reporters: ["default", "json"],
    outputFile: { json: ".tmp/vitest-report.json" },
  },
});
