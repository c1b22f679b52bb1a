import { defineConfig } from "tsup";

export default defineConfig({
  entry: {
    index: "src/index.ts",
    web: "src/web.ts",
    koa: "src/middleware/koa.ts",
    node: "src/middleware/node.ts",
    fetch: "src/middleware/fetch.ts",
  },
  format: ["esm", "cjs"],
  dts: true,
  // Shared chunks for CJS too, so WebhookVerificationError is one class across every subpath
  // and `instanceof` holds between them.
  splitting: true,
  clean: true,
  // Node 20 and every current edge runtime run ES2022 natively.
  target: "es2022",
  treeshake: true,
});
