import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/**
 * docs/operations.md promises every environment variable in one table. config.ts is the one
 * reader of the environment, so each variable it reads must have a row there: a new setting
 * fails this test until it is documented.
 */

const read = (path: string) => readFileSync(new URL(path, import.meta.url), "utf8");

describe("docs/operations.md", () => {
  it("has a table row for every variable config.ts reads", () => {
    const config = read("../src/platform/config.ts");
    const variables = [...config.matchAll(/\(env, "([A-Z][A-Z0-9_]*)"/g)].map((match) => match[1]);
    expect(variables.length).toBeGreaterThan(10);
    const guide = read("../../../docs/operations.md");
    const rows = new Set([...guide.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((match) => match[1]));
    expect(variables.filter((name) => !rows.has(name))).toEqual([]);
  });

  it("is linked from the README", () => {
    expect(read("../../../README.md")).toContain("(docs/operations.md)");
  });
});
