import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { COMMAND, OPERATIONS_DOC, renderOperationsDoc } from "../scripts/generate-config-doc.js";
import { settings } from "../src/config.js";

/**
 * docs/operations.md promises every environment variable in one table, generated from the
 * settings' declarations. This fails while the committed table is stale, and while anything but
 * config.ts reads the environment (a variable read elsewhere would be missing from the table).
 */

const read = (path: string) => readFileSync(new URL(path, import.meta.url), "utf8");
const SOURCE = fileURLToPath(new URL("../src/", import.meta.url));

describe("docs/operations.md", () => {
  it(`has the table of settings the declarations give (run \`${COMMAND}\` after changing one)`, () => {
    expect(readFileSync(OPERATIONS_DOC, "utf8")).toBe(renderOperationsDoc());
  });

  it("lists each variable once, and config.ts is the one reader of the environment", () => {
    const names = settings.variables.map((variable) => variable.env);
    expect(names.length).toBeGreaterThan(40);
    expect(new Set(names).size).toBe(names.length);
    const readers = (readdirSync(SOURCE, { recursive: true }) as string[])
      .filter((file) => file.endsWith(".ts"))
      .filter((file) => /process\.env\b/.test(readFileSync(join(SOURCE, file), "utf8")))
      .map((file) => relative(SOURCE, join(SOURCE, file)));
    expect(readers).toEqual(["config.ts"]);
  });

  it("is linked from the README", () => {
    expect(read("../../../README.md")).toContain("(docs/operations.md)");
  });
});
