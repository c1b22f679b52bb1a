import { defineConfig } from "tsup";

export default defineConfig({
  entry: { index: "src/index.ts", web: "src/web.ts" },
  format: ["esm", "cjs"],
  dts: true,
  // Shared chunks for CJS too, so the error classes are one set across both entries.
  splitting: true,
  clean: true,
  target: "es2022",
  treeshake: true,
});
