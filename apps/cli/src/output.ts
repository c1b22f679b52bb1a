// How results reach stdout: human tables by default, JSON for scripts (one object, or JSON Lines
// for lists, so `jq` and `while read` work on a stream of any length).
import { terminal } from "./terminal.js";

export interface Column<T> {
  header: string;
  value: (item: T) => unknown;
}

/** One cell as text: lists joined, absent values empty, objects as compact JSON. */
export function cell(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (Array.isArray(value)) return value.map(cell).join(",");
  if (typeof value === "object") return JSON.stringify(value);
  return String(value).replace(/\s*\n\s*/g, " ");
}

/** Left-aligned columns separated by two spaces, the header first. */
export function formatTable<T>(items: readonly T[], columns: readonly Column<T>[]): string {
  const rows = [
    columns.map((column) => column.header),
    ...items.map((item) => columns.map((c) => cell(c.value(item)))),
  ];
  const widths = columns.map((_, index) => Math.max(...rows.map((row) => (row[index] ?? "").length)));
  return rows
    .map((row) =>
      row
        .map((text, index) => (index === row.length - 1 ? text : text.padEnd(widths[index] ?? 0)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** `key  value` lines for one object (`get`, `create`, summaries). */
export function formatRecord(record: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(record).map((key) => key.length));
  return Object.entries(record)
    .map(([key, value]) => `${key.padEnd(width)}  ${cell(value)}`.trimEnd())
    .join("\n");
}

export function writeLine(text: string): void {
  terminal().stdout.write(`${text}\n`);
}

export function printObject(value: Record<string, unknown>, json: boolean): void {
  writeLine(json ? JSON.stringify(value) : formatRecord(value));
}

/**
 * Prints every item of a (paged) list: JSON Lines as they arrive, or a table once all are in.
 * `limit` caps how many are taken, however many pages that spans.
 */
export async function printList<T>(
  items: AsyncIterable<T> | Iterable<T>,
  columns: readonly Column<T>[],
  options: { json: boolean; limit?: number },
): Promise<number> {
  const taken: T[] = [];
  let count = 0;
  if (options.limit === 0) return 0;
  for await (const item of items) {
    count++;
    if (options.json) writeLine(JSON.stringify(item));
    else taken.push(item);
    if (options.limit !== undefined && count >= options.limit) break;
  }
  if (!options.json) writeLine(taken.length ? formatTable(taken, columns) : "(none)");
  return count;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}
