/** How long events stay readable, and how they get from the documents written to `events`. */

import { flag, integer, settingGroup } from "../platform/settings.js";

export const eventSettings = settingGroup({
  eventRetentionMs: integer("EVENT_RETENTION_DAYS", {
    default: 30,
    min: 1,
    times: 86_400_000,
    doc: "how long events stay readable through `GET /open/v1/events`, and how long an incremental pull lists deleted contacts and tickets (tombstones)",
  }),
  /**
   * How often the relay sweeps documents for events their writer did not move to `events` (it
   * crashed in between); the writer itself relays right after its write.
   */
  eventRelayIntervalMs: integer("EVENT_RELAY_INTERVAL_MS", {
    default: 30_000,
    min: 100,
    doc: "how often each process sweeps for events a crashed writer left on their documents",
  }),
  eventRelayImmediate: flag("EVENT_RELAY_IMMEDIATE", {
    default: true,
    doc: "writers move their own events right after the write; `false` only to test the sweep",
  }),
});
