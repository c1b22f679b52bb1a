import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SLOWEST } from "../sequencer.js";

// The files `pnpm test` starts first name files that exist: a renamed or removed one would
// silently drop out of the order (docs/development.md, "How it is built": the slowest files first).
describe("the slowest files first", () => {
  const root = join(import.meta.dirname, "../..");
  it.each(SLOWEST)("%s is a test file of the run", (file) => {
    expect(existsSync(join(root, file))).toBe(true);
    expect(file).toMatch(/\.test\.ts$/);
  });
  it("lists each file once", () => {
    expect(new Set(SLOWEST).size).toBe(SLOWEST.length);
  });
});
