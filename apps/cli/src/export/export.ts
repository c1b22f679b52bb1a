// `deskline contacts export` and `tickets export`: every item of a (filtered) list, page after
// page, written as CSV or JSON Lines in the columns `contacts import` reads. Items flow through
// one stream pipeline, so memory stays flat whatever the count: the list is read a page ahead of
// the writer and no faster than the output takes it (backpressure).
import { once } from "node:events";
import { createReadStream, createWriteStream, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { Readable, Transform, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { stringify } from "csv-stringify";
import { UsageError } from "../errors.js";
import {
  columnName,
  columnsOf,
  type FieldCatalog,
  type Target,
  targetOf,
  toText,
  valueAt,
} from "../fields.js";
import { formatDuration, formatRecord, writeLine } from "../output.js";
import { startProgress } from "../progress.js";
import { terminal } from "../terminal.js";
import { escapeFormula } from "./formula-cells.js";

export type ExportFormat = "csv" | "jsonl";
export const EXPORT_FORMATS: readonly ExportFormat[] = ["csv", "jsonl"];

export interface ExportOptions {
  /** `contacts`, `tickets`: for messages. */
  noun: string;
  format: string;
  /** `--fields name,email,custom_fields.plan`; every column when absent. */
  fields?: string;
  /** A file to write (replaced only once the export is complete); stdout when absent. */
  output?: string;
  limit?: number;
  json: boolean;
  /** Escape cells a spreadsheet would run as formulas (formula-cells.ts); on unless --no-escape-formulas. */
  escapeFormulas?: boolean;
}

export interface ExportSummary {
  rows: number;
  format: ExportFormat;
  output: string;
  duration_ms: number;
}

type Item = Record<string, unknown>;

/** Items a page ahead of the writer: two pages of 100, so the next request is out while one is written. */
const READ_AHEAD = 200;

/** The columns `--fields` names, each checked against the catalog as an import checks its header. */
export function parseFields(text: string, catalog: FieldCatalog): Target[] {
  const names = text
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  if (names.length === 0) throw new UsageError("--fields names no column");
  const unknown: string[] = [];
  const whole: string[] = [];
  const targets: Target[] = [];
  for (const name of names) {
    const target = targetOf(name, catalog);
    const kind = target && catalog.kinds.get(target.field);
    if (!target) unknown.push(name);
    else if (target.key === undefined && (kind === "map" || kind === "object")) whole.push(name);
    else targets.push(target);
  }
  if (unknown.length > 0) {
    const fields = [...catalog.kinds]
      .map(([field, kind]) =>
        kind === "map" ? `${field}.<key>` : kind === "object" ? `${field}.<part>` : field,
      )
      .join(", ");
    throw new UsageError(
      `--fields: unknown field${unknown.length > 1 ? "s" : ""} ${unknown.map((n) => `'${n}'`).join(", ")} (fields: ${fields})`,
    );
  }
  if (whole.length > 0) {
    throw new UsageError(
      `--fields: name the keys or parts of ${whole.map((n) => `'${n}'`).join(", ")}, one column each (${whole.map((n) => `${n}.<${catalog.kinds.get(n) === "map" ? "key" : "part"}>`).join(", ")})`,
    );
  }
  return targets;
}

/** Every column, with the keys of map fields that this item has (JSON Lines rows may differ). */
const columnsOfItem = (catalog: FieldCatalog, item: Item) =>
  columnsOf(catalog, (field) => Object.keys((item[field] as Item | null) ?? {}).sort());

/** A JSON Lines row: values keep their JSON types; a key or part the item lacks is left out. */
function jsonRow(item: Item, columns: readonly Target[]): string {
  const row: Item = {};
  for (const target of columns) {
    const value = valueAt(item, target);
    if (value !== undefined) row[columnName(target)] = value;
  }
  return `${JSON.stringify(row)}\n`;
}

const csvCells = (item: Item, columns: readonly Target[], safe: boolean) =>
  columns.map((target) => {
    const text = toText(valueAt(item, target));
    return safe ? escapeFormula(text) : text;
  });

async function* upTo<T>(items: AsyncIterable<T>, limit: number | undefined): AsyncGenerator<T> {
  if (limit === 0) return;
  let count = 0;
  for await (const item of items) {
    yield item;
    if (limit !== undefined && ++count >= limit) return;
  }
}

/** Writes every item; resolves to what was written. */
export async function exportItems(
  items: AsyncIterable<Item>,
  catalog: FieldCatalog,
  options: ExportOptions,
): Promise<ExportSummary> {
  const started = performance.now();
  const format = options.format as ExportFormat;
  if (!EXPORT_FORMATS.includes(format))
    throw new UsageError(`--format must be one of ${EXPORT_FORMATS.join(", ")}, not '${options.format}'`);
  const chosen = options.fields === undefined ? undefined : parseFields(options.fields, catalog);
  const layout: Layout = { format, catalog, chosen, safe: options.escapeFormulas ?? true };

  const progress = startProgress(undefined);
  let rows = 0;
  async function* counted(): AsyncGenerator<Item> {
    for await (const item of upTo(items, options.limit)) {
      rows++;
      progress.update(rows, 0);
      yield item;
    }
  }
  const source = () => Readable.from(counted(), { objectMode: true, highWaterMark: READ_AHEAD });

  const sink = openSink(options.output);
  try {
    await fillSink(sink, source, layout);
    await sink.commit();
  } catch (error) {
    sink.abandon();
    // A reader that went away (`| head`) wants no more, and no error for it.
    if ((error as NodeJS.ErrnoException).code !== "EPIPE") throw error;
  } finally {
    progress.stop();
  }

  const summary: ExportSummary = {
    rows,
    format,
    output: options.output ?? "-",
    duration_ms: Math.round(performance.now() - started),
  };
  printSummary(summary, options);
  return summary;
}

/** How the items become lines: the format, the fields, the columns asked for, formula escaping. */
interface Layout {
  format: ExportFormat;
  catalog: FieldCatalog;
  chosen: Target[] | undefined;
  safe: boolean;
}

/** Writes the items of `source` (a fresh stream each call) to the sink in the layout's format. */
async function fillSink(sink: Sink, source: () => Readable, layout: Layout): Promise<void> {
  const { catalog, chosen, safe } = layout;
  if (layout.format === "jsonl") {
    const map = (item: Item) => jsonRow(item, chosen ?? columnsOfItem(catalog, item));
    await sink.fill(source(), mapping(map));
  } else if (chosen || ![...catalog.kinds.values()].includes("map")) {
    const columns = chosen ?? columnsOf(catalog, () => []);
    await sink.fill(
      source(),
      mapping((item) => csvCells(item, columns, safe)),
      csvWriter(columns),
    );
  } else {
    await fillThroughSpool(sink, source(), catalog, safe);
  }
}

/**
 * A CSV header names every column before the first row, but no API call lists the keys of
 * `custom_fields` or `external_ids`: the items go to a JSON Lines spool on disk while their keys
 * are gathered, then the CSV is written from it (docs/decisions.md, "Exports …").
 */
async function fillThroughSpool(sink: Sink, source: Readable, catalog: FieldCatalog, safe: boolean) {
  const spool = mkdtempSync(join(tmpdir(), "deskline-export-"));
  try {
    const file = join(spool, "items.jsonl");
    const keys = new Map<string, Set<string>>();
    const gather = mapping((item) => {
      for (const [field, kind] of catalog.kinds) {
        if (kind !== "map") continue;
        const set = keys.get(field) ?? new Set<string>();
        for (const key of Object.keys((item[field] as Item | null) ?? {})) set.add(key);
        keys.set(field, set);
      }
      return `${JSON.stringify(item)}\n`;
    });
    await pipeline(source, gather, createWriteStream(file));
    const columns = columnsOf(catalog, (field) => [...(keys.get(field) ?? [])].sort());
    await sink.fill(
      Readable.from(spooled(file), { objectMode: true }),
      mapping((item) => csvCells(item, columns, safe)),
      csvWriter(columns),
    );
  } finally {
    rmSync(spool, { recursive: true, force: true });
  }
}

/** The rows are on stdout unless --output took them: only then is there room for a summary. */
function printSummary(summary: ExportSummary, options: ExportOptions): void {
  if (options.output === undefined) return;
  writeLine(
    options.json
      ? JSON.stringify(summary)
      : formatRecord({
          exported: `${summary.rows} ${options.noun}`,
          format: summary.format,
          file: options.output,
          duration: formatDuration(summary.duration_ms),
        }),
  );
}

function mapping(map: (item: Item) => unknown): Transform {
  return new Transform({
    objectMode: true,
    transform(item: Item, _encoding, done) {
      done(null, map(item));
    },
  });
}

function csvWriter(columns: readonly Target[]) {
  return stringify({ header: true, columns: columns.map(columnName) });
}

async function* spooled(file: string): AsyncGenerator<Item> {
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    if (line !== "") yield JSON.parse(line) as Item;
  }
}

/** What `pipeline` chains: the pages' source, the formatting transforms, the destination. */
type Stage = NodeJS.ReadableStream | NodeJS.WritableStream | NodeJS.ReadWriteStream;

interface Sink {
  fill(source: Readable, ...through: (Transform | NodeJS.ReadWriteStream)[]): Promise<void>;
  /** The export is complete: the file takes its place. */
  commit(): Promise<void>;
  /** The export failed: no partial file is left where the complete one would be. */
  abandon(): void;
}

/**
 * stdout, or a file written beside its final path and renamed there at the end, so an export
 * that fails half-way never leaves half a file under the name asked for.
 */
function openSink(output: string | undefined): Sink {
  if (output === undefined) {
    return {
      // stdout stays open after the export (the process may still print), hence `end: false`.
      fill: async (source, ...through) => {
        const stages: Stage[] = [source, ...through, terminal().stdout];
        await pipeline(stages, { end: false });
      },
      commit: async () => {},
      abandon: () => {},
    };
  }
  const partial = join(dirname(output), `.${basename(output)}.${process.pid}.partial`);
  let file: Writable | undefined;
  return {
    fill: async (source, ...through) => {
      try {
        file = createWriteStream(partial, { flags: "wx" });
        await once(file, "open");
      } catch (error) {
        throw new UsageError(`cannot write '${output}': ${(error as Error).message}`);
      }
      const stages: Stage[] = [source, ...through, file];
      await pipeline(stages);
    },
    commit: async () => {
      renameSync(partial, output);
    },
    abandon: () => {
      file?.destroy();
      rmSync(partial, { force: true });
    },
  };
}
