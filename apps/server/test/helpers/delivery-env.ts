// The delivery settings of test servers, in a module of its own: the end-to-end project's server
// takes them too, through @deskline/test-kit, which loads none of the delivery helpers with them.

/**
 * Retries in milliseconds, and polls often enough that a test waits a fraction of a second for
 * what another process queued or left, yet seldom enough that an idle server costs little: at
 * 50 ms and 100 ms, one idle ROLE=all server took a fifth of a core. The relay's sweep, which
 * only finds what a crashed writer left, reads six collections a round: every 2 s (docs/development.md,
 * "How it is built").
 */
export const TEST_DELIVERY_ENV = {
  WEBHOOK_RETRY_DELAYS: "50ms,50ms,50ms,50ms",
  WEBHOOK_POLL_INTERVAL_MS: "200",
  WEBHOOK_TIMEOUT_MS: "1000",
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
  EVENT_RELAY_INTERVAL_MS: "2000",
};
