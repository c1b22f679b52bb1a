// The one sleep-and-retry loop of the server, its soak trials and its test helpers: each caller
// names its policy (first wait, growth, cap, jitter) and when to give up; the loop is written once.
// Why this is a module and not a library: docs/decisions.md ("One backoff helper").
import { setTimeout as sleep } from "node:timers/promises";

/** How long to wait before each retry. */
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

/** The wait before retry number `retry` (1 for the first retry). */
export function backoffDelay(
  policy: BackoffPolicy,
  retry: number,
  random: () => number = Math.random,
): number {
  const grown = policy.firstMs * (policy.factor ?? 1) ** (retry - 1);
  const wait = Math.min(grown, policy.maxMs ?? Number.POSITIVE_INFINITY);
  return policy.jitter === "full" ? random() * wait : wait;
}

export interface RetryOptions {
  /**
   * Asked after every attempt that returned AGAIN, before waiting: true stops the loop (it
   * resolves undefined); it may instead throw the error the caller gives up with.
   */
  giveUp?: (attempts: number) => boolean;
  /** Aborting stops the loop between attempts (it resolves undefined). */
  signal?: AbortSignal;
}

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
  for (let n = 1; !options.signal?.aborted; n++) {
    const outcome = await attempt(n);
    if (outcome !== AGAIN) return outcome;
    if (options.giveUp?.(n)) return undefined;
    try {
      await sleep(backoffDelay(policy, n), undefined, { signal: options.signal });
    } catch {
      return undefined; // aborted while waiting
    }
  }
  return undefined;
}
