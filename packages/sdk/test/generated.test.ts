// The generated layer is current with the spec, and the version the SDK announces is the package's.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OUTPUT, render } from "../scripts/generate-types.js";
import { VERSION } from "../src/index.js";

describe("generated types and version", () => {
  it("src/generated/openapi.ts is up to date (run `pnpm -F @deskline/sdk generate` after changing the spec)", async () => {
    expect(readFileSync(OUTPUT, "utf8")).toBe(await render());
  });

  it("VERSION is package.json's version", () => {
    const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    expect(VERSION).toBe(manifest.version);
  });
});
