import { AGAIN, type BackoffPolicy, retry } from "../src/platform/backoff.js";

/**
 * A backlog of writes and when its deliveries arrived: the delivery benches (delivery.ts and its
 * scenario modules, recovery.ts) queue one before a worker drains it, then read the drain's rate
 * off the receiver's arrival times.
 */

/** A receiver's arrival times (delivery-kit.ts), by the contact id the delivery carried. */
export interface Arrivals {
  arrived: Map<string, number>;
}

/**
 * `size` writes, 16 at a time, in whole rounds of 16 (so up to 15 more than `size`); the
 * contact ids.
 */
export async function writeBacklog(write: () => Promise<{ contactId: string }>, size: number) {
  const ids: string[] = [];
  for (let i = 0; i < size; i += 16) {
    const batch = await Promise.all(Array.from({ length: 16 }, () => write()));
    ids.push(...batch.map((b) => b.contactId));
  }
  return ids;
}

/** Waits (polling by `policy`) until every one of `ids` has arrived at `at`; when each did. */
export async function arrivalsOf(at: Arrivals, ids: string[], policy: BackoffPolicy = { firstMs: 50 }) {
  await retry(policy, async () => (ids.every((id) => at.arrived.has(id)) ? true : AGAIN));
  return ids.map((id) => at.arrived.get(id) as number);
}

/**
 * First arrival to last: how long a drain took (seconds) and its deliveries a second, which
 * leaves out the time before the first delivery (a worker starting, a recovery paging).
 */
export function arrivalRate(arrivals: number[]) {
  const seconds = (Math.max(...arrivals) - Math.min(...arrivals)) / 1000;
  return { seconds, perSecond: (arrivals.length - 1) / seconds };
}
