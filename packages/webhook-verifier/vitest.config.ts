import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "webhook-verifier",
    include: ["test/**/*.test.ts"],
    // `*.test-d.ts` are type tests: tsc checks them and each failed expectation fails a test.
    typecheck: { enabled: true, include: ["test/**/*.test-d.ts"], tsconfig: "./tsconfig.type-tests.json" },
  },
});
