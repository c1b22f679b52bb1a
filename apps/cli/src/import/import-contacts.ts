// `deskline contacts import <file>`: read rows as a stream, map and validate each against the
// spec, upsert the valid ones (100 a request through the batch operation where the server has
// it, else one by one, `concurrency` at a time), send the rest to the errors file, and report
// created / updated / unchanged / failed.
import type { Deskline } from "@deskline/sdk";
import { describeError, PartialFailure, UsageError } from "../errors.js";
import { CONTACT_SKIPPED_ON_IMPORT } from "../export/columns.js";
import { catalogOf, parseRenames } from "../fields.js";
import { contactCreateSchema } from "../generated/schemas.js";
import { formatDuration, formatRecord, writeLine } from "../output.js";
import { forEachConcurrent } from "../pool.js";
import { startProgress } from "../progress.js";
import { terminal } from "../terminal.js";
import { compileValidator } from "../validate.js";
import { BatchImporter } from "./batch.js";
import { customFieldTypes } from "./custom-field-cells.js";
import { DuplicateKeys } from "./duplicate-keys.js";
import { type ErrorsWriter, type FailedRow, openErrorsFile } from "./errors-file.js";
import { type InputFormat, openRows, type SourceRow } from "./read-rows.js";
import { RowMapper } from "./row-body.js";
import {
  isFatal,
  matchValue,
  type Outcome,
  parseMatch,
  previewContact,
  type UpsertOptions,
  upsertContact,
} from "./upsert.js";

export interface ImportOptions {
  file: string;
  format?: InputFormat;
  map: string[];
  match?: string;
  concurrency: number;
  errors?: string;
  dryRun: boolean;
  json: boolean;
}

export interface ImportSummary {
  rows: number;
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
  /** Rows whose match key an earlier row of the file had (duplicate-keys.ts). */
  duplicate_keys: number;
  duration_ms: number;
  dry_run: boolean;
}

/** Failures shown on stderr when no --errors file takes them. */
const SHOWN_FAILURES = 20;

export async function importContacts(deskline: Deskline, options: ImportOptions): Promise<ImportSummary> {
  const started = performance.now();
  const { match, catalog, mapper, validate, source } = await openImport(deskline, options);
  const fromText = source.format === "csv";
  const tally = new Tally(
    options.errors ? openErrorsFile(options.errors, source.format, source.header) : undefined,
  );
  const progress = startProgress(source.totalBytes);
  const duplicates = new DuplicateKeys();
  const upsertOptions = { deskline, catalog, match, file: options.file };
  const batches = new BatchImporter(
    { ...upsertOptions, concurrency: options.concurrency },
    {
      done: (outcome) => tally.counts[outcome]++,
      failed: (row, reason, code) => tally.fail({ row, reason, code }),
    },
  );

  const handle = async (row: SourceRow) => {
    tally.rows++;
    const mapped = mapper.bodyOf(row, fromText);
    const reason = "error" in mapped ? mapped.error : validate(mapped.body);
    if (reason !== undefined || !("body" in mapped)) {
      await tally.fail({ row, reason: reason ?? "invalid" });
      return progress.update(tally.rows, source.bytesRead());
    }
    // Before any wait: rows are taken in file order, so the first of a key is the first noted.
    duplicates.note(row.line, matchValue(mapped.body, match));
    if (!options.dryRun && batches.accepts(mapped.body)) {
      await batches.add(row, mapped.body);
    } else {
      await upsertOne(row, mapped.body, { ...upsertOptions, dryRun: options.dryRun }, tally);
    }
    progress.update(tally.rows, source.bytesRead());
  };

  try {
    await forEachConcurrent(source.rows, options.concurrency, handle);
    await batches.flush();
  } finally {
    progress.stop();
    await tally.close();
  }
  tally.reportHidden();
  duplicates.report(options.match ?? "email");
  const summary: ImportSummary = {
    rows: tally.rows,
    ...tally.counts,
    failed: tally.failed,
    duplicate_keys: duplicates.repeats.length,
    duration_ms: Math.round(performance.now() - started),
    dry_run: options.dryRun,
  };
  printSummary(summary, options.json);
  if (tally.failed > 0) throw new PartialFailure(`${tally.failed} rows failed`);
  return summary;
}

/** What the rows are read, mapped and checked with; usage errors surface before any row is read. */
async function openImport(deskline: Deskline, options: ImportOptions) {
  const match = parseMatch(options.match);
  if (!match)
    throw new UsageError(`--match must be 'email' or 'external_ids.<system>', not '${options.match}'`);
  const catalog = catalogOf(contactCreateSchema);
  const renames = parseRenames(options.map);
  // A file from `contacts export` carries the fields the API sets (id, time stamps): skipped,
  // unless --map names them (docs/decisions.md, "Exports write the columns imports read").
  for (const name of CONTACT_SKIPPED_ON_IMPORT) if (!renames.has(name)) renames.set(name, "");
  const mapper = new RowMapper(catalog, renames);
  const validate = compileValidator(contactCreateSchema);
  const source = await openRows(options.file, options.format);
  if (source.header) mapper.checkHeader(source.header);
  // Read once, before any row: a CSV cell of a typed custom field is sent as its type.
  const typed =
    source.format === "csv" && source.header !== undefined && mapper.fillsCustomFields(source.header);
  mapper.customFieldTypes = await customFieldTypes(deskline, typed);
  return { match, catalog, mapper, validate, source };
}

/** One row through the one-row upsert (or its preview): rows a batch cannot take. */
async function upsertOne(
  row: SourceRow,
  body: Record<string, unknown>,
  options: UpsertOptions & { dryRun: boolean },
  tally: Tally,
): Promise<void> {
  try {
    const outcome = options.dryRun ? await previewContact(body, options) : await upsertContact(body, options);
    tally.counts[outcome]++;
  } catch (error) {
    if (isFatal(error)) throw error;
    const { code, reason } = describeError(error);
    await tally.fail({ row, reason, code });
  }
}

/** The run's counts, and where its failed rows go: the errors file, else the first few on stderr. */
class Tally {
  readonly counts: Record<Outcome, number> = { created: 0, updated: 0, unchanged: 0 };
  failed = 0;
  rows = 0;

  constructor(private readonly errors: ErrorsWriter | undefined) {}

  async fail(failure: FailedRow): Promise<void> {
    this.failed++;
    if (this.errors) await this.errors.write(failure);
    else if (this.failed <= SHOWN_FAILURES)
      terminal().stderr.write(`line ${failure.row.line}: ${failure.reason}\n`);
  }

  async close(): Promise<void> {
    await this.errors?.close();
  }

  /** Says how many failures stderr did not show. */
  reportHidden(): void {
    if (!this.errors && this.failed > SHOWN_FAILURES) {
      terminal().stderr.write(
        `… and ${this.failed - SHOWN_FAILURES} more failed rows (--errors <file> keeps them all)\n`,
      );
    }
  }
}

function printSummary(summary: ImportSummary, json: boolean): void {
  if (json) {
    writeLine(JSON.stringify(summary));
    return;
  }
  const verb = summary.dry_run ? "would be " : "";
  writeLine(
    formatRecord({
      [`${verb}created`]: summary.created,
      [`${verb}updated`]: summary.updated,
      unchanged: summary.unchanged,
      failed: summary.failed,
      rows: summary.rows,
      duration: formatDuration(summary.duration_ms),
      ...(summary.dry_run ? { "dry run": "nothing was written" } : {}),
    }),
  );
}
