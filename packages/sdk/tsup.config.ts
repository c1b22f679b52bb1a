import { defineConfig } from "tsup";

export default defineConfig({
  entry: { index: "src/index.ts", web: "src/web.ts" },
  format: ["esm", "cjs"],
  // The spec's types live in the private @deskline/spec (a devDependency, never published):
  // resolve them into the declarations, so dist/*.d.ts import nothing a user cannot install.
  dts: { resolve: [/^@deskline\/spec\//] },
  // Shared chunks for CJS too, so the error classes are one set across both entries.
  splitting: true,
  clean: true,
  target: "es2022",
  treeshake: true,
});
