// The one staleness test of the spec's generated types: every package imports them from here.
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { describe, expect, it } from "vitest";
import { renderAll } from "../scripts/generate.js";

describe("openapi.d.ts and admin.d.ts are what the specs generate", async () => {
  const files = [...(await renderAll())].map(([file, contents]) => [relative(process.cwd(), file), contents]);
  it.each(files)(
    "%s is up to date (run `pnpm -F @deskline/spec-types generate` after changing a spec)",
    (file, contents) => {
      expect(readFileSync(file as string, "utf8")).toBe(contents);
    },
  );
});
