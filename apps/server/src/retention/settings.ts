/**
 * How long each collection that grows with traffic keeps its records, and the rules between them
 * (docs/operations.md "Retention"): events 30 days, their deliveries and attempts 90 as Svix
 * keeps them, tombstones as long as events and finished recoveries as long as deliveries unless
 * set. Idempotency keys keep `IDEMPOTENCY_TTL_HOURS` (platform/config.ts) and console sessions
 * their own lifetime.
 */

import { ConfigError, integer, settingGroup } from "../platform/settings.js";

const DAY_MS = 86_400_000;
/** Deliveries and attempts, unless set: Svix's 90 days. */
const DELIVERY_DEFAULT_DAYS = 90;

const days = (ms: number) => `${ms / DAY_MS}`;

export const retentionSettings = settingGroup(
  {
    eventRetentionMs: integer("EVENT_RETENTION_DAYS", {
      default: 30,
      min: 1,
      times: DAY_MS,
      doc: "how long events stay readable through `GET /open/v1/events`, can be resent and are reached by a recovery. See [Retention](#retention)",
    }),
    deliveryRetentionMs: integer("DELIVERY_RETENTION_DAYS", {
      default: undefined,
      defaultDoc: "`90`, or `EVENT_RETENTION_DAYS` if longer",
      min: 1,
      times: DAY_MS,
      doc: "how long a settled webhook delivery is kept (listed, counted for a recovery); at least `EVENT_RETENTION_DAYS`. See [Retention](#retention)",
    }),
    attemptRetentionMs: integer("ATTEMPT_RETENTION_DAYS", {
      default: undefined,
      defaultDoc: "`DELIVERY_RETENTION_DAYS`",
      min: 1,
      times: DAY_MS,
      doc: "how long a delivery attempt and the answer stored with it are kept; at most `DELIVERY_RETENTION_DAYS`. See [Retention](#retention)",
    }),
    recoveryRetentionMs: integer("RECOVERY_RETENTION_DAYS", {
      default: undefined,
      defaultDoc: "`DELIVERY_RETENTION_DAYS`",
      min: 1,
      times: DAY_MS,
      doc: "how long a finished webhook recovery stays readable after it finished. See [Retention](#retention)",
    }),
    tombstoneRetentionMs: integer("TOMBSTONE_RETENTION_DAYS", {
      default: undefined,
      defaultDoc: "`EVENT_RETENTION_DAYS`",
      min: 1,
      times: DAY_MS,
      doc: "how long an incremental pull lists deleted contacts and tickets (tombstones). See [Retention](#retention)",
    }),
  },
  {
    build: (values) => {
      const events = values.eventRetentionMs;
      const deliveries = values.deliveryRetentionMs ?? Math.max(DELIVERY_DEFAULT_DAYS * DAY_MS, events);
      if (deliveries < events) {
        throw new ConfigError(
          `DELIVERY_RETENTION_DAYS (${days(deliveries)}) must be at least EVENT_RETENTION_DAYS (${days(events)}): ` +
            "a recovery takes an event with a succeeded delivery as delivered, so it would send again " +
            "every kept event whose delivery was removed (docs/operations.md, Retention)",
        );
      }
      const attempts = values.attemptRetentionMs ?? deliveries;
      if (attempts > deliveries) {
        throw new ConfigError(
          `ATTEMPT_RETENTION_DAYS (${days(attempts)}) must be at most DELIVERY_RETENTION_DAYS (${days(deliveries)}): ` +
            "an attempt is read as part of its delivery, which would be gone (docs/operations.md, Retention)",
        );
      }
      return {
        eventRetentionMs: events,
        deliveryRetentionMs: deliveries,
        attemptRetentionMs: attempts,
        recoveryRetentionMs: values.recoveryRetentionMs ?? deliveries,
        tombstoneRetentionMs: values.tombstoneRetentionMs ?? events,
      };
    },
  },
);

export type RetentionSettings = ReturnType<typeof retentionSettings.read>;
