/**
 * The 15-failure rule: an endpoint whose deliveries fail DISABLE_AFTER_FAILURES times in a row is
 * disabled, and a success starts the count again. Stated here as the conditional single-document
 * updates that apply it (`WebhookEndpoints.deliveryFailed` / `deliverySucceeded` in endpoints.ts
 * run them), so concurrent deliveries never lose a count and exactly one of them disables it.
 */

/** Consecutive failed deliveries after which an endpoint is disabled. */
export const DISABLE_AFTER_FAILURES = 15;
export const FAILURES_DISABLED_REASON = `${DISABLE_AFTER_FAILURES} consecutive failed deliveries`;

/** A success: the consecutive failures start again from 0 (no write when they are 0 already). */
export function resetFailures(id: string) {
  return {
    filter: { _id: id, consecutive_failures: { $ne: 0 } },
    update: { $set: { consecutive_failures: 0 } },
  };
}

/** A failure below the limit: one more, and the endpoint stays enabled. */
export function countFailure(id: string) {
  return {
    filter: {
      _id: id,
      status: "enabled" as const,
      consecutive_failures: { $lt: DISABLE_AFTER_FAILURES - 1 },
    },
    update: { $inc: { consecutive_failures: 1 } },
  };
}

/** The failure that reaches the limit: the endpoint is disabled, saying why. */
export function disableForFailures(id: string, now: Date) {
  return {
    filter: {
      _id: id,
      status: "enabled" as const,
      consecutive_failures: { $gte: DISABLE_AFTER_FAILURES - 1 },
    },
    update: {
      $set: {
        status: "disabled" as const,
        disabled_at: now,
        disabled_reason: FAILURES_DISABLED_REASON,
        consecutive_failures: DISABLE_AFTER_FAILURES,
        updated_at: now,
      },
      // It writes the status a PATCH writes, so a PATCH decided before it decides again.
      $inc: { version: 1 },
    },
  };
}
