// The rows an import could not take (CSV rows as CSV with the original header, JSON rows as JSON
// Lines), each with its line number and the reason, so they can be fixed and imported again. Its
// CSV is opened in a spreadsheet to fix the rows, so it is formula-safe as an export is
// (export/formula-cells.ts): each cell is written as an export would write the value the import
// read from it, and so imports again to the same value (docs/decisions.md "Formula-safe CSV exports").

import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import { stringify } from "csv-stringify/sync";
import { escapeFormula, unescapeFormula } from "../export/formula-cells.js";
import type { InputFormat, SourceRow } from "./read-rows.js";

export interface FailedRow {
  row: SourceRow;
  reason: string;
  code?: string;
}

export interface ErrorsWriter {
  write(failed: FailedRow): Promise<void>;
  close(): Promise<void>;
}

/** CSV: `line,reason,<original columns>`. JSON and JSON Lines: `{line, reason, code?, row}` per line. */
export function openErrorsFile(
  path: string,
  format: InputFormat,
  header: readonly string[] = [],
): ErrorsWriter {
  const out: WriteStream = createWriteStream(path, { encoding: "utf8" });
  let started = false;
  const put = async (text: string) => {
    if (!out.write(text)) await once(out, "drain");
  };
  const csvLine = (cells: readonly string[]) =>
    stringify([cells.map((cell) => escapeFormula(unescapeFormula(cell)))]);
  return {
    async write({ row, reason, code }) {
      if (format === "csv") {
        if (!started) await put(csvLine(["line", "reason", ...header]));
        const cells = Array.isArray(row.original) ? (row.original as string[]) : [];
        await put(csvLine([String(row.line), reason, ...cells]));
      } else {
        await put(
          `${JSON.stringify({ line: row.line, reason, ...(code ? { code } : {}), row: row.original })}\n`,
        );
      }
      started = true;
    },
    async close() {
      if (!started && format === "csv") await put(csvLine(["line", "reason", ...header]));
      out.end();
      await once(out, "finish");
    },
  };
}
