// When to retry and how long to wait: pure rules, table-tested, kept apart from the middleware
// that applies them (retry-middleware.ts). Retrying is safe because every POST carries an Idempotency-Key.

/** Statuses worth another attempt: timeouts, rate limits and failures on the server's side. */
export function isRetryableStatus(status: number, code: string | undefined): boolean {
  if (status === 408 || status === 429 || status >= 500) return true;
  // The first request with this Idempotency-Key is still running (its answer will be replayed),
  // or other requests held the record's lock (the PATCH changed nothing): both end soon.
  return status === 409 && (code === "idempotency_key_in_flight" || code === "concurrent_update");
}

const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 8_000;
/** A server asking for more than this is not waited for by a retry loop. */
const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Delay before retry number `retry` (1 for the first retry). `Retry-After` (seconds, or an HTTP
 * date) wins when the server sends it; otherwise exponential backoff with jitter, so that many
 * clients failing together do not retry together: a random point in the upper half of the step.
 */
export function retryDelayMs(
  retry: number,
  retryAfter: string | null | undefined,
  random: () => number = Math.random,
  now: number = Date.now(),
): number {
  const fromServer = parseRetryAfter(retryAfter, now);
  if (fromServer !== undefined) return Math.min(fromServer, MAX_RETRY_AFTER_MS);
  const step = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** (retry - 1));
  return Math.round(step / 2 + (random() * step) / 2);
}

function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (value === null || value === undefined || value.trim() === "") return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.max(0, Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
