// `deskline contacts import <file>`: read rows as a stream, map and validate each against the
// spec, upsert the valid ones (100 a request through the batch operation where the server has
// it, else one by one, `concurrency` at a time), send the rest to the errors file, and report
// created / updated / unchanged / failed.
import { AuthenticationError, ConnectionError, type Deskline, PermissionError } from "@deskline/sdk";
import { describeError, PartialFailure, UsageError } from "../errors.js";
import { CONTACT_SKIPPED_ON_IMPORT } from "../export/columns.js";
import { catalogOf, parseRenames } from "../fields.js";
import { contactCreateSchema } from "../generated/schemas.js";
import { formatDuration, formatRecord, writeLine } from "../output.js";
import { forEachConcurrent } from "../pool.js";
import { startProgress } from "../progress.js";
import { compileValidator } from "../validate.js";
import { BatchImporter } from "./batch.js";
import { type ErrorsWriter, type FailedRow, openErrorsFile } from "./errors-file.js";
import { type InputFormat, openRows, type SourceRow } from "./read-rows.js";
import { RowMapper } from "./row-body.js";
import { type Outcome, parseMatch, previewContact, upsertContact } from "./upsert.js";

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
  duration_ms: number;
  dry_run: boolean;
}

/** Failures shown on stderr when no --errors file takes them. */
const SHOWN_FAILURES = 20;

/** Errors that no other row would escape: stop the run instead of failing every row alike. */
const isFatal = (error: unknown) =>
  error instanceof AuthenticationError ||
  error instanceof PermissionError ||
  error instanceof ConnectionError;

export async function importContacts(deskline: Deskline, options: ImportOptions): Promise<ImportSummary> {
  const started = performance.now();
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
  const fromText = source.format === "csv";

  const errors: ErrorsWriter | undefined = options.errors
    ? openErrorsFile(options.errors, source.format, source.header)
    : undefined;
  const counts: Record<Outcome, number> = { created: 0, updated: 0, unchanged: 0 };
  let failed = 0;
  let rows = 0;
  const progress = startProgress(source.totalBytes);
  const upsertOptions = { deskline, catalog, match, file: options.file };

  const fail = async (failure: FailedRow) => {
    failed++;
    if (errors) await errors.write(failure);
    else if (failed <= SHOWN_FAILURES) process.stderr.write(`line ${failure.row.line}: ${failure.reason}\n`);
  };
  const batches = new BatchImporter(
    { ...upsertOptions, concurrency: options.concurrency },
    { done: (outcome) => counts[outcome]++, failed: (row, reason, code) => fail({ row, reason, code }) },
  );

  const handle = async (row: SourceRow) => {
    rows++;
    const mapped = mapper.bodyOf(row, fromText);
    const reason = "error" in mapped ? mapped.error : validate(mapped.body);
    if (reason !== undefined || !("body" in mapped)) {
      await fail({ row, reason: reason ?? "invalid" });
    } else if (!options.dryRun && batches.accepts(mapped.body)) {
      await batches.add(row, mapped.body);
    } else {
      try {
        const outcome = options.dryRun
          ? await previewContact(mapped.body, upsertOptions)
          : await upsertContact(mapped.body, upsertOptions);
        counts[outcome]++;
      } catch (error) {
        if (isFatal(error)) throw error;
        const { code, reason: why } = describeError(error);
        await fail({ row, reason: why, code });
      }
    }
    progress.update(rows, source.bytesRead());
  };

  try {
    await forEachConcurrent(source.rows, options.concurrency, handle);
    await batches.flush();
  } finally {
    progress.stop();
    await errors?.close();
  }
  if (!errors && failed > SHOWN_FAILURES) {
    process.stderr.write(
      `… and ${failed - SHOWN_FAILURES} more failed rows (--errors <file> keeps them all)\n`,
    );
  }
  const summary: ImportSummary = {
    rows,
    ...counts,
    failed,
    duration_ms: Math.round(performance.now() - started),
    dry_run: options.dryRun,
  };
  printSummary(summary, options.json);
  if (failed > 0) throw new PartialFailure(`${failed} rows failed`);
  return summary;
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
