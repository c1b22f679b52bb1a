/**
 * The part of autocannon 8's programmatic API the benchmark uses (the package ships no types and
 * @types/autocannon is not a dependency). See node_modules/autocannon/README.md, "API".
 */
declare module "autocannon" {
  import type { EventEmitter } from "node:events";

  interface RawRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
  }

  interface Request extends RawRequest {
    /** Called before every send; returns the request to send (a falsy value restarts the sequence). */
    setupRequest?: (request: RawRequest, context: Record<string, unknown>) => RawRequest | null;
    onResponse?: (
      status: number,
      body: string,
      context: Record<string, unknown>,
      headers: Record<string, string>,
    ) => void;
  }

  interface Options extends RawRequest {
    url: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    amount?: number;
    /** Seconds before a request counts as a timeout. */
    timeout?: number;
    pipelining?: number;
    title?: string;
    requests?: Request[];
  }

  /** An hdr-histogram-percentiles-obj summary. */
  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
    p99_9: number;
  }

  interface Result {
    title?: string;
    url: string;
    connections: number;
    /** Seconds. */
    duration: number;
    /** Requests per second sampled each second; `total` is the number completed. */
    requests: Histogram & { sent: number };
    /** Milliseconds. */
    latency: Histogram & { totalCount: number };
    throughput: Histogram;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    resets: number;
    statusCodeStats: Record<string, { count: number }>;
  }

  /**
   * In a worker thread, an Instance resolves with this raw form (encoded histograms) instead of
   * a Result; `aggregateResult([raw], options)` makes the Result.
   */
  type RawResult = Record<string, unknown>;

  interface Instance extends EventEmitter, PromiseLike<Result> {
    stop(): void;
  }

  function autocannon(options: Options): Instance;
  namespace autocannon {
    function aggregateResult(results: RawResult[], options: Options): Result;
  }
  export default autocannon;
  export type { Instance, Options, RawRequest, RawResult, Request, Result };
}
