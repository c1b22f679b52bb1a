import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "server",
    include: ["test/**/*.test.ts"],
    // One database and one server for the whole run; files isolate by workspace.
    globalSetup: ["test/global-setup.ts"],
    // Files share each worker's modules (the server's source is imported once, not per file);
    // what a file's helpers start stops after it (docs/development.md, "How it is built").
    isolate: false,
    setupFiles: ["test/setup/file-end.ts"],
    // The run's number (the root vitest.config.ts), so that the project run from this directory
    // gets it too; a different one would make vitest run this project apart from the others.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 180_000,
  },
});
