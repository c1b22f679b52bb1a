import { defineConfig } from "tsup";
import { publishedBuild } from "../tsup.base.js";

export default defineConfig({
  ...publishedBuild,
  entry: {
    index: "src/index.ts",
    web: "src/web.ts",
    koa: "src/middleware/koa.ts",
    node: "src/middleware/node.ts",
    express: "src/middleware/express.ts",
    fetch: "src/middleware/fetch.ts",
    fastify: "src/middleware/fastify.ts",
  },
});
