/**
 * How events get from the documents written to `events` (how long they are kept:
 * retention/settings.ts).
 */

import { flag, integer, settingGroup } from "../platform/settings.js";

export const eventSettings = settingGroup({
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
