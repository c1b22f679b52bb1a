import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "cli",
    include: ["test/**/*.test.ts"],
    // The real server on the embedded database, started once for every file (as the server's
    // tests do), and the CLI built, since the tests run the built binary.
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});
