import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "webhook-verifier",
    include: ["test/**/*.test.ts"],
    // `*.test-d.ts` are type tests: `pnpm typecheck` compiles them, and a failed expectation is a
    // compile error there.
  },
});
