import type { Config } from "../src/config.js";
import type { BenchContext, RequestContext } from "./environment.js";

/**
 * One API operation to measure, and the raw driver operation it is compared with. The runner
 * measures each scenario at every connection count, API first then the driver, on the same
 * database; adding a scenario is adding one of these to an array (see scenarios.ts).
 */
export interface Scenario {
  /** Shown in the report; BENCH_SCENARIOS selects scenarios by it. */
  name: string;
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** Path and query string, e.g. `/open/v1/contacts?limit=10`. */
  path: string;
  /** A path per request instead (e.g. one of the seeded records), with `n` as for `bodyOf`. */
  pathOf?: (n: number, context: RequestContext) => string;
  /** One JSON body sent with every request. */
  body?: unknown;
  /**
   * A JSON body per request (autocannon's `setupRequest`): `n` never repeats within a run, so
   * values that must be unique (emails, external ids) do not collide. It runs in the load
   * generator's thread, so it sees only the plain values of a RequestContext.
   */
  bodyOf?: (n: number, context: RequestContext) => unknown;
  /** Runs once before the scenario is measured, e.g. to create the records a list reads. */
  seed?: (context: BenchContext) => Promise<void>;
  /**
   * Records shared with other scenarios: scenarios naming the same dataset run one after another
   * on one database, which the dataset fills once, before the first of them.
   */
  dataset?: Dataset;
  baseline: Baseline;
  /**
   * Settings of an API server of the scenario's own, started next to the group's on the same
   * database (same workspace, key and records) and measured instead of it: e.g. the rate limiter
   * on, shared or per process (the group's server runs with it off, as the tests do).
   */
  server?: Partial<Config>;
  /** A bare HTTP server doing the baseline's work, measured under the same load (http-floor.ts). */
  floor?: Floor;
}

/** What `floor` starts: a server the load can be pointed at instead of the API. */
export interface FloorServer {
  baseUrl: string;
  stop(): Promise<void>;
}

export interface Floor {
  /** For the report, e.g. `node:http + findOne(…)`. */
  label: string;
  /** Started after the scenario's seed, stopped after its measurements. */
  start(context: BenchContext): Promise<FloorServer>;
}

/** The driver operation closest to what the API call does for its client. */
export interface Baseline {
  /** For the report, e.g. `insertOne` or `find().sort().limit(11)`. */
  label: string;
  /**
   * Runs once after `seed` and returns the operation, which gets an `n` that never repeats
   * within a run.
   */
  prepare(context: BenchContext): Promise<(n: number) => Promise<unknown>>;
}

/** Records several scenarios read and write, made once. */
export interface Dataset {
  name: string;
  /** Fills the workspace; returns the ids it made (the context's `seededIds`). */
  seed(context: BenchContext): Promise<string[]>;
}
