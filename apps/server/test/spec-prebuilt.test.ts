// What the build keeps of the spec (src/spec/prebuilt.ts): the same documents the YAML gives, kept
// only while the YAML is what it was built from, and ignored when unreadable.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseSpecFile, SPEC_FILES, specPath } from "../src/spec/documents.js";
import { digestOf, readPrebuilt, writePrebuilt } from "../src/spec/prebuilt.js";
import { MAIN_ENTRY } from "./helpers/server-process.js";

const scratch = mkdtempSync(join(tmpdir(), "deskline-prebuilt-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe.each(SPEC_FILES)("the prebuilt %s", (file) => {
  const text = readFileSync(specPath(file), "utf8");

  it("reads back as the YAML parses, and only for the text it was built from", async () => {
    const parsed = await parseSpecFile(file, text);
    writePrebuilt(file, { digest: digestOf(text), ...parsed }, scratch);
    const prebuilt = readPrebuilt(file, text, scratch);
    expect(prebuilt?.json).toEqual(parse(text)); // the tests' own YAML parser, not the server's
    expect(prebuilt?.dereferenced).toEqual(parsed.dereferenced);
    expect(prebuilt?.bundled).toEqual(parsed.bundled);
    // An edit after the build (one more space) and the build is not used.
    expect(readPrebuilt(file, `${text} `, scratch)).toBeUndefined();
    // Nothing there (running from source), or not a serialized value: the YAML is read instead.
    expect(readPrebuilt(file, text, join(scratch, "none"))).toBeUndefined();
    writeFileSync(join(scratch, `${file}.v8`), "not v8");
    expect(readPrebuilt(file, text, scratch)).toBeUndefined();
  });

  // `pnpm test` builds before the tests; a focused run on an edited tree starts from source.
  it.runIf(MAIN_ENTRY[0] === "dist/main.js")("is in the build, made from the spec as it is now", () => {
    const built = readPrebuilt(file, text, join(import.meta.dirname, "../dist/spec/prebuilt"));
    expect(built?.json).toEqual(parse(text));
  });
});
