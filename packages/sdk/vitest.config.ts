import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "sdk",
    include: ["test/**/*.test.ts"],
    // The real server on the embedded database, started once for every file (as the server's own
    // tests do); files isolate by workspace.
    globalSetup: ["test/global-setup.ts"],
    // Files share each worker's modules (the server's source is imported once, not per file);
    // what a file's helpers start stops after it (docs/development.md, "How it is built").
    isolate: false,
    setupFiles: ["../../apps/server/test/setup/file-end.ts"],
    testTimeout: 30_000,
    hookTimeout: 180_000,
  },
});
