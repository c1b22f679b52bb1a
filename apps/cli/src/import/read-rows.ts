// Reads an import file (or stdin) as a stream of rows, whatever its format: CSV (any quoting,
// embedded newlines, a BOM, `,` or `;`), JSON Lines, or one JSON array. Nothing holds more than
// the rows being worked on: the consumer pulls, and the file is read only as fast as it pulls.
import { createReadStream, statSync } from "node:fs";
import { extname } from "node:path";
import { createInterface } from "node:readline";
import { Readable, Transform } from "node:stream";
import { type CsvError, parse as parseCsv } from "csv-parse";
import streamArray from "stream-json/streamers/stream-array.js";
import { UsageError } from "../errors.js";

export type InputFormat = "csv" | "jsonl" | "json";
export const INPUT_FORMATS: readonly InputFormat[] = ["csv", "jsonl", "json"];

/** One row as read: where it started, and its values by input name (or why it could not be read). */
export interface SourceRow {
  /** 1-based line of the file where the row starts (for a JSON array: the item's 1-based index). */
  line: number;
  values?: Record<string, unknown>;
  /** The row as it was in the file: CSV cells, or the JSON value. */
  original: unknown;
  /** Set when the row cannot be read at all (broken JSON, a CSV row of the wrong width). */
  error?: string;
}

export interface RowSource {
  format: InputFormat;
  /** CSV: the header row. */
  header?: string[];
  rows: AsyncIterable<SourceRow>;
  /** Bytes consumed so far, and the file's size when known (for the progress bar's ETA). */
  bytesRead(): number;
  totalBytes: number | undefined;
}

const EXTENSIONS: Record<string, InputFormat> = {
  ".csv": "csv",
  ".jsonl": "jsonl",
  ".ndjson": "jsonl",
  ".json": "json",
};

/** Opens `file` (`-` for stdin) and reads its rows in the given format, or the one it looks like. */
export async function openRows(file: string, format?: InputFormat): Promise<RowSource> {
  let stream: NodeJS.ReadableStream;
  let totalBytes: number | undefined;
  if (file === "-") stream = process.stdin;
  else {
    try {
      totalBytes = statSync(file).size;
    } catch {
      throw new UsageError(`cannot read '${file}': no such file`);
    }
    stream = createReadStream(file);
  }
  let bytes = 0;
  const counted = (stream as Readable).pipe(
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        bytes += chunk.length;
        done(null, chunk);
      },
    }),
  );
  const { first, rest } = await peek(counted);
  const chosen = format ?? EXTENSIONS[extname(file).toLowerCase()] ?? sniffFormat(first);
  const input = Readable.from(rest, { objectMode: false });
  const source = { bytesRead: () => bytes, totalBytes };
  if (chosen === "csv") return { ...source, ...(await readCsv(input, sniffDelimiter(first))) };
  if (chosen === "jsonl") return { ...source, format: "jsonl", rows: readJsonLines(input) };
  return { ...source, format: "json", rows: readJsonArray(input) };
}

/** The first chunk (to sniff), and an iterable that still yields every chunk, that one first. */
async function peek(stream: Readable): Promise<{ first: string; rest: AsyncIterable<Buffer> }> {
  const iterator = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const head = await iterator.next();
  let firstChunk = head.done ? Buffer.alloc(0) : head.value;
  // A byte-order mark says "UTF-8" and nothing else: drop it before any parser sees it.
  if (firstChunk[0] === 0xef && firstChunk[1] === 0xbb && firstChunk[2] === 0xbf)
    firstChunk = firstChunk.subarray(3);
  async function* all() {
    if (firstChunk.length) yield firstChunk;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  }
  return { first: firstChunk.toString("utf8"), rest: all() };
}

/** `[` starts a JSON array, `{` JSON Lines; anything else is taken for CSV. */
export function sniffFormat(start: string): InputFormat {
  const char = start.trimStart()[0];
  return char === "[" ? "json" : char === "{" ? "jsonl" : "csv";
}

/** `;` when the header line has more semicolons than commas (outside quotes), else `,`. */
export function sniffDelimiter(start: string): "," | ";" {
  const counts = { ",": 0, ";": 0 };
  let quoted = false;
  for (const char of start) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && (char === "\n" || char === "\r")) break;
    else if (!quoted && (char === "," || char === ";")) counts[char]++;
  }
  return counts[";"] > counts[","] ? ";" : ",";
}

async function readCsv(
  input: Readable,
  delimiter: string,
): Promise<Pick<RowSource, "format" | "header" | "rows">> {
  const skipped: SourceRow[] = [];
  const parser = input.pipe(
    parseCsv({
      bom: true,
      delimiter,
      info: true,
      skip_empty_lines: true,
      relax_column_count: true,
      skip_records_with_error: true,
    }),
  );
  // A malformed record (an unclosed quote…) is skipped by the parser and reported as a bad row.
  parser.on("skip", (error: CsvError & { lines?: number; record?: string[] }) => {
    skipped.push({
      line: error.lines ?? 0,
      original: error.record ?? [],
      error: `not valid CSV: ${error.message}`,
    });
  });
  const records = parser[Symbol.asyncIterator]() as AsyncIterator<{
    record: string[];
    info: { lines: number };
  }>;
  const head = await records.next();
  if (head.done) throw new UsageError("the CSV file is empty: a header row naming the columns is needed");
  const header = head.value.record.map((name) => name.trim());
  async function* rows(): AsyncGenerator<SourceRow> {
    for (;;) {
      const next = await records.next();
      if (skipped.length > 0) yield* skipped.splice(0);
      if (next.done) return;
      yield csvRow(next.value.record, next.value.info.lines, header);
    }
  }
  return { format: "csv", header, rows: rows() };
}

/** One record as a row, its fields named by the header; `lines`: the parser's count at its end. */
function csvRow(record: string[], lines: number, header: readonly string[]): SourceRow {
  // The parser counts lines up to the record's end; a quoted newline inside it moves its start up.
  const newlines = record.reduce((sum, value) => sum + (value.match(/\n/g)?.length ?? 0), 0);
  const line = lines - newlines;
  if (record.length !== header.length) {
    return {
      line,
      original: record,
      error: `has ${record.length} fields where the header has ${header.length}`,
    };
  }
  const values: Record<string, unknown> = {};
  header.forEach((name, index) => {
    values[name] = record[index];
  });
  return { line, values, original: record };
}

async function* readJsonLines(input: Readable): AsyncGenerator<SourceRow> {
  let line = 0;
  for await (const text of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
    line++;
    const trimmed = text.trim();
    if (trimmed === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch (error) {
      yield { line, original: text, error: `not valid JSON: ${(error as Error).message}` };
      continue;
    }
    yield objectRow(line, value);
  }
}

async function* readJsonArray(input: Readable): AsyncGenerator<SourceRow> {
  const items = input.pipe(streamArray.withParserAsStream());
  try {
    for await (const item of items as AsyncIterable<{ key: number; value: unknown }>) {
      yield objectRow(item.key + 1, item.value);
    }
  } catch (error) {
    // A broken array cannot be read past the break: stop the run there, saying where.
    throw new UsageError(`the JSON array cannot be read: ${(error as Error).message}`);
  }
}

function objectRow(line: number, value: unknown): SourceRow {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { line, original: value, error: "not a JSON object" };
  }
  return { line, values: value as Record<string, unknown>, original: value };
}
