import type { RequestContext } from "./environment.js";

/**
 * What crosses the load worker's thread boundary: the order measure.ts gives load-worker.ts, and
 * the measurement both of them (and the driver's measurements) report. Kept apart so that the
 * two sides share the types without importing each other.
 */

/** The load worker's workerData. */
export interface LoadOrder {
  /** A name from scenarios.ts: functions cannot cross threads, so the worker imports its own. */
  scenario: string;
  context: RequestContext;
  connections: number;
  seconds: number;
  /** The `n` of the first request; the measurement reserved the numbers after it. */
  firstN: number;
}

export interface Measurement {
  /** Completed operations per second over the whole measured time. */
  perSecond: number;
  /** Milliseconds. */
  p50: number;
  p99: number;
  completed: number;
  /** Non-2xx answers (API only). */
  non2xx: number;
  /** Connection errors and timeouts (API), thrown errors (driver). */
  errors: number;
  /** Why some operations failed: a few status codes and bodies, or error messages. */
  failures: string[];
}

/** How many failure descriptions a measurement keeps. */
export const FAILURE_SAMPLES = 3;
