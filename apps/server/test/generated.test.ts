import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { describe, expect, it } from "vitest";
import { renderAll } from "../scripts/generate-types.js";

describe("src/generated/ is what the spec generates", async () => {
  const files = [...(await renderAll())].map(([file, contents]) => [relative(process.cwd(), file), contents]);
  it.each(files)(
    "%s is up to date (run `pnpm -F @deskline/server generate` after changing the spec)",
    (file, contents) => {
      expect(readFileSync(file as string, "utf8")).toBe(contents);
    },
  );
});
