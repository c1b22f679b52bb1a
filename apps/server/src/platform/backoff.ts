// The one sleep-and-retry loop of the server, its soak trials, benchmarks and test helpers: each
// caller names its policy (first wait, growth, cap, jitter) and when to give up; the waiting is
// exponential-backoff's. Why this library and this shape: docs/decisions.md ("One backoff helper").
import { backOff } from "exponential-backoff";

/** How long to wait before each retry: retry n waits firstMs × factorⁿ⁻¹, at most maxMs. */
export interface BackoffPolicy {
  /** The wait before the first retry, in milliseconds. */
  firstMs: number;
  /** Each wait is the last one times this (1, the default: a fixed interval). */
  factor?: number;
  /** No wait is longer than this. */
  maxMs?: number;
  /**
   * `full`: a random point between 0 and the wait, so racers that lost together do not retry
   * together. Default `none`.
   */
  jitter?: "none" | "full";
}

/** What an attempt returns to be tried again. */
export const AGAIN: unique symbol = Symbol("again");

/** Thrown inside the library's loop for an attempt that returned AGAIN (it retries on a rejection). */
const TRY_AGAIN = new Error("try again");

/**
 * A `giveUp` for a deadline `ms` from now: past it, throws `error()` when given, else stops.
 */
export function giveUpAfter(ms: number, error?: () => Error): () => boolean {
  const at = Date.now() + ms;
  return () => {
    if (Date.now() <= at) return false;
    if (error) throw error();
    return true;
  };
}

export interface RetryOptions {
  /**
   * Asked after every attempt that returned AGAIN, before waiting: true stops the loop (it
   * resolves undefined); it may instead throw the error the caller gives up with.
   */
  giveUp?: (attempts: number) => boolean;
  /** Aborting stops the loop before its next attempt (it resolves undefined). */
  signal?: AbortSignal;
}

/**
 * Runs `attempt` (numbered from 1) until it returns something other than AGAIN, and resolves
 * with that; waits by `policy` before each retry. Errors `attempt` throws are not retried: an
 * attempt that retries on some errors catches them and returns AGAIN.
 */
export async function retry<T>(
  policy: BackoffPolicy,
  attempt: (n: number) => Promise<T | typeof AGAIN>,
  options: RetryOptions = {},
): Promise<T | undefined> {
  let attempts = 0;
  try {
    return await backOff(
      async () => {
        if (options.signal?.aborted) throw TRY_AGAIN; // and the `retry` below stops
        const outcome = await attempt(++attempts);
        if (outcome === AGAIN) throw TRY_AGAIN;
        return outcome;
      },
      {
        startingDelay: policy.firstMs,
        timeMultiple: policy.factor ?? 1,
        maxDelay: policy.maxMs ?? Number.POSITIVE_INFINITY,
        jitter: policy.jitter ?? "none",
        numOfAttempts: Number.POSITIVE_INFINITY,
        retry: (error) => error === TRY_AGAIN && !options.signal?.aborted && !options.giveUp?.(attempts),
      },
    );
  } catch (error) {
    if (error === TRY_AGAIN) return undefined;
    throw error;
  }
}
