import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "spec-types",
    include: ["test/**/*.test.ts"],
  },
});
