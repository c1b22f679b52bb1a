/**
 * The 15-failure rule: an endpoint whose deliveries fail DISABLE_AFTER_FAILURES times in a row is
 * disabled, and a success starts the count again. The conditional updates that apply it, with the
 * operational events they send, are in endpoint-health.ts.
 */

/** Consecutive failed deliveries after which an endpoint is disabled. */
export const DISABLE_AFTER_FAILURES = 15;
export const FAILURES_DISABLED_REASON = `${DISABLE_AFTER_FAILURES} consecutive failed deliveries`;
