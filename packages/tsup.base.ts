// The build both published packages share (the SDK's and the verifier's tsup.config.ts add their
// entries): ESM and CJS from one source, declarations that inline the private spec types, and one
// set of shared chunks across entries. Plain values (no import of tsup, which each package holds,
// not this folder); the packages' defineConfig checks them.

export const publishedBuild = {
  format: ["esm", "cjs"] as ("esm" | "cjs")[],
  // The spec's types live in the private @deskline/spec (a devDependency, never published):
  // resolve them into the declarations, so dist/*.d.ts import nothing a user cannot install.
  dts: { resolve: [/^@deskline\/spec\//] },
  // Shared chunks for CJS too, so a class (an error class) is one class across every entry and
  // `instanceof` holds between them.
  splitting: true,
  clean: true,
  // Node 20 and every current edge runtime run ES2022 natively.
  target: "es2022" as const,
  treeshake: true,
};
