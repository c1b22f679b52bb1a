import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "spec",
    include: ["test/**/*.test.ts"],
  },
});
