import { defineConfig } from "tsup";

// One ESM entry, `dist/bin.js`, with a chunk per command group (loaded on demand by program.ts).
export default defineConfig({
  entry: { bin: "src/bin.ts" },
  format: ["esm"],
  platform: "node",
  target: "node20",
  splitting: true,
  clean: true,
  sourcemap: true,
  // Dependencies stay in node_modules, resolved at run time like any installed package.
  skipNodeModulesBundle: true,
});
