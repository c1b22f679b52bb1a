// Spreadsheet formula injection in CSV exports (OWASP "CSV Injection"): a cell that begins with
// `=`, `+`, `-`, `@`, a tab or a carriage return is a formula to Excel, LibreOffice and Google
// Sheets, which run it when the file is opened. Such a cell is written with a leading `'`, which
// the spreadsheets show as text and hide. `contacts import` takes the `'` off again, so an
// exported file reads back to the same values: a phone `+1 555 0100` or a balance `-12.5` make
// the round trip (docs/decisions.md "Formula-safe CSV exports").

/** What a spreadsheet would evaluate, as the first character of a cell. */
const TRIGGER = /^[=+\-@\t\r]/;
/**
 * A cell that reads as escaped: `'` then a trigger or another `'`. A value that itself begins so
 * is escaped once more, so every exported cell has one reading; other values beginning with `'`
 * (`'Tis`) are written as they are.
 */
const ESCAPED = /^'[=+\-@\t\r']/;

/** The cell as a CSV export writes it. */
export function escapeFormula(cell: string): string {
  return TRIGGER.test(cell) || ESCAPED.test(cell) ? `'${cell}` : cell;
}

/** The value of a cell an export wrote (`escapeFormula` undone); other cells are left as they are. */
export function unescapeFormula(cell: string): string {
  return ESCAPED.test(cell) ? cell.slice(1) : cell;
}
