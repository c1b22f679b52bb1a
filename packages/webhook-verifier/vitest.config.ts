import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "webhook-verifier",
    include: ["test/**/*.test.ts"],
  },
});
