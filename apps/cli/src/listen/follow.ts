// Follows the workspace's events API about once a second and hands over, oldest first, the
// events the cursor has not handled. Most polls read only the top of the list, down to the first
// event already handled; every few polls one reads the whole look-back window, which is where an
// event relayed late (older id, new to the list) turns up. Outages of the API are reported and
// waited out; only a key that cannot read events at all ends the follow.
import { setTimeout as sleep } from "node:timers/promises";
import {
  AuthenticationError,
  type Deskline,
  type DesklineEvent,
  type EventType,
  PermissionError,
} from "@deskline/sdk";
import { type Cursor, createdAfter, isPending } from "./cursor.js";

export interface FollowOptions {
  /** Only these types (the API filters); all when empty. */
  types: readonly EventType[];
  /** Stops the follow, between polls or in the middle of one. */
  signal: AbortSignal;
  intervalMs?: number;
  /** Every how many polls the whole window is read again. */
  fullScanEvery?: number;
  /** A poll failed for a reason that may pass (server down, 5xx, rate limit); polling goes on. */
  onPollError?: (error: unknown) => void;
  /** A poll succeeded (after failures, say so). */
  onPollOk?: () => void;
}

/** A key that cannot read events will not be able to next second either. */
const isFatal = (error: unknown) => error instanceof AuthenticationError || error instanceof PermissionError;

/** The pending events of one poll, oldest first. */
async function poll(deskline: Deskline, cursor: Cursor, full: boolean, options: FollowOptions) {
  const found: DesklineEvent[] = [];
  const query = {
    created_after: String(createdAfter(cursor)),
    limit: 100,
    ...(options.types.length ? { type: [...options.types] } : {}),
  };
  for await (const event of deskline.events.list(query, { signal: options.signal })) {
    if (isPending(cursor, event)) found.push(event);
    // Newest first: below a handled event lies what earlier polls read (late arrivals aside,
    // which the full scans find).
    else if (!full) break;
  }
  return found.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * Yields each poll's pending events (never an empty batch) until the signal aborts. `cursor()`
 * is read at every poll, so the caller records what it handled and the next poll skips it.
 */
export async function* followEvents(
  deskline: Deskline,
  cursor: () => Cursor,
  options: FollowOptions,
): AsyncGenerator<DesklineEvent[]> {
  const intervalMs = options.intervalMs ?? 1000;
  const fullScanEvery = options.fullScanEvery ?? 10;
  for (let count = 0; !options.signal.aborted; count++) {
    const started = performance.now();
    try {
      const batch = await poll(deskline, cursor(), count % fullScanEvery === 0, options);
      options.onPollOk?.();
      if (batch.length) yield batch;
    } catch (error) {
      if (options.signal.aborted) return;
      if (isFatal(error)) throw error;
      options.onPollError?.(error);
    }
    const wait = Math.max(0, intervalMs - (performance.now() - started));
    await sleep(wait, undefined, { signal: options.signal }).catch(() => {});
  }
}
