// Every write and environment read of the CLI goes through `terminal()` (src/terminal.ts), so
// command lines run in one process keep their output apart: a direct `process.stdout`,
// `process.stderr` or `process.env` anywhere else would leak between them (and between tests).
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../src", import.meta.url));
/** Where the process's own streams are meant: the terminal itself, and the binary's entry. */
const ALLOWED = new Set(["terminal.ts", "bin.ts"]);

const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(join(dir, entry.name))
      : entry.name.endsWith(".ts")
        ? [join(dir, entry.name)]
        : [],
  );

describe("the CLI's terminal", () => {
  it("is the only way to stdout, stderr and the environment", () => {
    const direct = sources(SRC)
      .filter((file) => !ALLOWED.has(relative(SRC, file)))
      .filter((file) => /process\.(stdout|stderr|env)\b/.test(readFileSync(file, "utf8")))
      .map((file) => relative(SRC, file));
    expect(direct).toEqual([]);
  });
});
