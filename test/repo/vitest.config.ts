import { defineConfig } from "vitest/config";

// Checks of the repository's own files (no server, no build), so they run in a second.
export default defineConfig({
  test: {
    name: "repo",
    include: ["*.test.ts"],
  },
});
