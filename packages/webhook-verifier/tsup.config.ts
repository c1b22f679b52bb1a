import { defineConfig } from "tsup";

export default defineConfig({
  entry: {
    index: "src/index.ts",
    web: "src/web.ts",
    koa: "src/middleware/koa.ts",
    node: "src/middleware/node.ts",
    fetch: "src/middleware/fetch.ts",
    fastify: "src/middleware/fastify.ts",
  },
  format: ["esm", "cjs"],
  // The spec's types live in the private @deskline/spec (a devDependency, never published):
  // resolve them into the declarations, so dist/*.d.ts import nothing a user cannot install.
  dts: { resolve: [/^@deskline\/spec\//] },
  // Shared chunks for CJS too, so WebhookVerificationError is one class across every subpath
  // and `instanceof` holds between them.
  splitting: true,
  clean: true,
  // Node 20 and every current edge runtime run ES2022 natively.
  target: "es2022",
  treeshake: true,
});
