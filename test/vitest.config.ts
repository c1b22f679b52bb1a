import { defineConfig } from "vitest/config";

// The end-to-end project: the built server, CLI, SDK and verifier together, through their public
// faces only (see docs/development.md, "How it is built").
export default defineConfig({
  test: {
    name: "e2e",
    include: ["e2e/**/*.test.ts"],
    globalSetup: ["global-setup.ts"],
    // Files share each worker's modules (the server's source is imported once, not per file);
    // what a file's helpers start stops after it (docs/development.md, "How it is built").
    isolate: false,
    setupFiles: ["../apps/server/test/setup/file-end.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
