// The one staleness test of what the spec generates (types, values, the docs' table of ticket
// moves): every package imports them from this package.
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { describe, expect, it } from "vitest";
import { COMMAND, renderAll } from "../scripts/generate.js";

describe("the files generated from openapi.yaml and admin.yaml are what the specs generate", async () => {
  const files = [...(await renderAll())].map(([file, contents]) => [relative(process.cwd(), file), contents]);
  it.each(files)(`%s is up to date (run \`${COMMAND}\` after changing a spec)`, (file, contents) => {
    expect(readFileSync(file as string, "utf8")).toBe(contents);
  });
});
