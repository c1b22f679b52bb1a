// Import rows through `POST /open/v1/contacts/batch` (100 rows a request) when the server has it:
// the server matches, creates or updates only what differs, and answers per row, so a row costs a
// hundredth of a request instead of one to three. Rows without a match value, and every row when
// the server predates the batch operation, go through the one-row upsert instead.
import { errorFromResponse } from "@deskline/sdk";
import { describeError } from "../errors.js";
import { forEachConcurrent } from "../pool.js";
import type { SourceRow } from "./read-rows.js";
import {
  isFatal,
  type Match,
  matchValue,
  type Outcome,
  type UpsertOptions,
  upsertContact,
} from "./upsert.js";

/** The most the API takes in one batch. */
const BATCH_SIZE = 100;
/**
 * Batches in flight at most, whatever `--concurrency`: each carries 100 rows, so four keep a server
 * busy, and every batch more only waits at the server while its rows, bodies and request stay in
 * memory (docs/benchmarks.md, "CLI import": 16 in flight took the import's peak RSS to 180 MB).
 */
const BATCHES_IN_FLIGHT = 4;

type Body = Record<string, unknown>;

export interface RowReport {
  done(outcome: Outcome): void;
  failed(row: SourceRow, reason: string, code: string | undefined): Promise<void>;
}

/** A server without the batch operation answers its path with 404 route_not_found (or 405). */
const lacksBatch = (status: number, code: string | undefined) =>
  (status === 404 && code === "route_not_found") || status === 405;

/** A row as a batch keeps it: where it was and what it held (for the errors file), not its parsed values. */
type Queued = { row: SourceRow; body: Body };

export class BatchImporter {
  #chunk: Queued[] = [];
  /** Batches sent and not answered yet. */
  #inFlight = 0;
  /** Rows (and a full batch) waiting for a batch to end. */
  #waiting: (() => void)[] = [];
  /** Unknown until the server first answers a batch. */
  #served: boolean | undefined;

  constructor(
    private readonly options: UpsertOptions & { concurrency: number },
    private readonly report: RowReport,
  ) {}

  /** Whether a row can go in a batch: it carries the value it is matched on. */
  accepts(body: Body): boolean {
    return this.#served !== false && matchValue(body, this.options.match) !== undefined;
  }

  /**
   * Queues a row; the caller that fills the batch sends it and waits for the answer. While a full
   * batch waits for one of the BATCHES_IN_FLIGHT to end, new rows wait too (back-pressure): what
   * is held is the batches in flight and one more, not a full batch per caller.
   */
  async add(row: SourceRow, body: Body): Promise<void> {
    while (this.#chunk.length >= BATCH_SIZE) await this.#batchEnded();
    this.#chunk.push({ row: { line: row.line, original: row.original }, body });
    if (this.#chunk.length < BATCH_SIZE) return;
    while (this.#inFlight >= Math.min(this.options.concurrency, BATCHES_IN_FLIGHT)) await this.#batchEnded();
    const chunk = this.#chunk;
    this.#chunk = [];
    this.#inFlight++;
    try {
      await this.#send(chunk);
    } finally {
      this.#inFlight--;
      for (const wake of this.#waiting.splice(0)) wake();
    }
  }

  #batchEnded(): Promise<void> {
    return new Promise<void>((ended) => this.#waiting.push(ended));
  }

  /** Sends what is queued (the last, partial batch). */
  async flush(): Promise<void> {
    const chunk = this.#chunk;
    this.#chunk = [];
    await this.#send(chunk);
  }

  async #send(chunk: Queued[]): Promise<void> {
    if (chunk.length === 0) return;
    const { deskline, match } = this.options;
    const { data, error, response } = await deskline.raw.POST("/open/v1/contacts/batch", {
      body: { match: matchName(match), contacts: chunk.map(({ body }) => body) },
    });
    if (!response.ok || !data) {
      const failure = errorFromResponse(response, error);
      if (isFatal(failure)) throw failure;
      if (lacksBatch(response.status, failure.code)) {
        this.#served = false;
        await this.#oneByOne(chunk);
        return;
      }
      const { code, reason } = describeError(failure);
      for (const { row } of chunk) await this.report.failed(row, reason, code);
      return;
    }
    this.#served = true;
    const where = ` (request ${response.headers.get("request-id")})`;
    for (const result of data.data) {
      const { row } = chunk[result.index] as { row: SourceRow };
      if (result.status === "error")
        await this.report.failed(row, `${result.error.message}${where}`, result.error.code);
      else this.report.done(result.status);
    }
  }

  async #oneByOne(chunk: Queued[]): Promise<void> {
    await forEachConcurrent(toAsync(chunk), this.options.concurrency, async ({ row, body }) => {
      try {
        this.report.done(await upsertContact(body, this.options));
      } catch (error) {
        if (isFatal(error)) throw error;
        const { code, reason } = describeError(error);
        await this.report.failed(row, reason, code);
      }
    });
  }
}

const matchName = (match: Match) =>
  match.kind === "email" ? "email" : (`external_ids.${match.system}` as const);

async function* toAsync<T>(items: T[]): AsyncIterable<T> {
  yield* items;
}
