// The CSV export's formula escaping (src/export/formula-cells.ts) as a pure rule: what a
// spreadsheet would run gets a leading ', and the import's reading undoes exactly that.
import { describe, expect, it } from "vitest";
import { escapeFormula, unescapeFormula } from "../src/export/formula-cells.js";

describe("formula escaping of CSV cells", () => {
  it.each([
    ['=HYPERLINK("https://evil.example.invalid","x")', `'=HYPERLINK("https://evil.example.invalid","x")`],
    ["@SUM(1+1)", "'@SUM(1+1)"],
    ["+1 555 0100", "'+1 555 0100"],
    ["-12.5", "'-12.5"],
    ["\tindented", "'\tindented"],
    ["\r=1+1", "'\r=1+1"],
    // Values that already begin as an escaped cell are escaped once more, so they read back whole.
    ["'=already", "''=already"],
    ["''", "'''"],
    // Nothing a spreadsheet runs: as is.
    ["Ada Lovelace", "Ada Lovelace"],
    ["'Tis", "'Tis"],
    ["'", "'"],
    [" =spaced", " =spaced"],
    ["a=b", "a=b"],
    ["", ""],
  ])("%j is written %j and read back", (value, cell) => {
    expect(escapeFormula(value)).toBe(cell);
    expect(unescapeFormula(cell)).toBe(value);
  });
});
