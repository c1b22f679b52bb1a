// The server's generated files are what the spec generates now, and the generator refuses an
// `x-transitions` that does not fit its enum.
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { describe, expect, it } from "vitest";
import { renderAll, transitionsOf } from "../scripts/generate-types.js";

describe("src/generated/ is what the spec generates", async () => {
  const files = [...(await renderAll())].map(([file, contents]) => [relative(process.cwd(), file), contents]);
  it.each(files)(
    "%s is up to date (run `pnpm -F @deskline/server generate` after changing the spec)",
    (file, contents) => {
      expect(readFileSync(file as string, "utf8")).toBe(contents);
    },
  );
});

describe("x-transitions", () => {
  const statuses = { enum: ["open", "done"] };

  it("is refused unless it names every value once and moves only to other values of the enum", () => {
    expect(() => transitionsOf("S", { ...statuses, "x-transitions": { open: ["done"] } })).toThrow(
      /every value/,
    );
    expect(() =>
      transitionsOf("S", { ...statuses, "x-transitions": { open: ["closed"], done: [] } }),
    ).toThrow(/'open' names 'closed'/);
    expect(() => transitionsOf("S", { ...statuses, "x-transitions": { open: ["open"], done: [] } })).toThrow(
      /'open' names 'open'/,
    );
    expect(transitionsOf("S", { ...statuses, "x-transitions": { done: [], open: ["done"] } })).toEqual({
      open: ["done"],
      done: [],
    });
  });
});
