/**
 * What a receiver's history says about delivery's guarantees under a fault
 * (test/delivery-faults.test.ts): read from the requests alone, never from the server's own
 * records, so a worker that believes it did right cannot hide what the endpoint saw. Pure.
 */

/** One request as the receiver saw it (./https-receiver.ts `ReceivedDelivery`). */
export interface Sent {
  eventId: string;
  startedAt: number;
  /** Answered or abandoned; undefined while in flight. */
  endedAt?: number;
  inFlightAtStart: number;
  /** The status answered; undefined when the sender went away first. */
  status?: number;
}

export interface HistoryOptions {
  /**
   * The deliveries the fault interrupted (in flight when it struck): each may be sent once more
   * than the others, and that send must come before any later event's first one.
   */
  interrupted?: ReadonlySet<string>;
  /** Requests each event is meant to get (1; a delivery whose attempts all fail gets 1 + retries). */
  sendsPerEvent?: number;
  /** Where the longest idle time is measured from (a SIGTERM); none when absent. */
  idleFrom?: number;
}

export interface HistoryFigures {
  /** The most requests in flight at once. */
  mostInFlight: number;
  /**
   * Events first sent after a later event's first send had already been answered. (Counted against
   * answered sends, not started ones: requests sent together may reach the receiver in any order.)
   */
  inversions: number;
  /** Interrupted deliveries sent again only after a later, uninterrupted event's first send was answered. */
  resentLate: number;
  /** Requests beyond `sendsPerEvent` per event and one more per interrupted delivery. */
  duplicates: number;
  /** Events of the expected order that never got a 2xx answer. */
  missing: number;
  /** The longest time nothing was in flight, from `idleFrom` to the last request's start. */
  longestIdleMs: number | undefined;
}

/** Reads `sent` against `order`, the events in the order they happened. */
export function readHistory(sent: readonly Sent[], order: readonly string[], options: HistoryOptions = {}) {
  const interrupted = options.interrupted ?? new Set<string>();
  const byEvent = new Map<string, Sent[]>(order.map((id) => [id, []]));
  for (const request of [...sent].sort((a, b) => a.startedAt - b.startedAt)) {
    byEvent.get(request.eventId)?.push(request);
  }
  const sendsOf = (id: string) => byEvent.get(id) ?? [];
  const figures: HistoryFigures = {
    mostInFlight: Math.max(0, ...sent.map((r) => r.inFlightAtStart)),
    inversions: countInversions(order, sendsOf),
    resentLate: countResentLate(order, sendsOf, interrupted),
    duplicates: order.reduce((extra, id) => {
      const allowed = (options.sendsPerEvent ?? 1) + (interrupted.has(id) ? 1 : 0);
      return extra + Math.max(0, sendsOf(id).length - allowed);
    }, 0),
    missing: order.filter((id) => !sendsOf(id).some((r) => r.status !== undefined && r.status < 300)).length,
    longestIdleMs: options.idleFrom === undefined ? undefined : longestIdle(sent, options.idleFrom),
  };
  return figures;
}

const ended = (request: Sent | undefined) => request?.endedAt ?? Number.POSITIVE_INFINITY;

/** Walks the events newest first, keeping when the first answered send of a later event ended. */
function countInversions(order: readonly string[], sendsOf: (id: string) => Sent[]): number {
  let laterEnded = Number.POSITIVE_INFINITY;
  let inversions = 0;
  for (let i = order.length - 1; i >= 0; i--) {
    const first = sendsOf(order[i] as string)[0];
    if (!first) continue;
    if (first.startedAt > laterEnded) inversions++;
    laterEnded = Math.min(laterEnded, ended(first));
  }
  return inversions;
}

function countResentLate(
  order: readonly string[],
  sendsOf: (id: string) => Sent[],
  interrupted: ReadonlySet<string>,
): number {
  let late = 0;
  order.forEach((id, index) => {
    const again = sendsOf(id)[1];
    if (!interrupted.has(id) || !again) return;
    const overtaken = order
      .slice(index + 1)
      .some((later) => !interrupted.has(later) && ended(sendsOf(later)[0]) < again.startedAt);
    if (overtaken) late++;
  });
  return late;
}

/** The longest stretch after `from` with nothing in flight, up to the last request's start. */
function longestIdle(sent: readonly Sent[], from: number): number {
  let coveredUntil = from;
  let longest = 0;
  for (const request of [...sent].sort((a, b) => a.startedAt - b.startedAt)) {
    const end = request.endedAt ?? Number.POSITIVE_INFINITY;
    if (end <= from) continue;
    if (request.startedAt > coveredUntil) longest = Math.max(longest, request.startedAt - coveredUntil);
    coveredUntil = Math.max(coveredUntil, end);
  }
  return longest;
}

/** One line per fault, for the run's output: the figures a note on the faults quotes. */
export function summaryLine(fault: string, figures: Record<string, number | string | undefined>): string {
  const parts = Object.entries(figures)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}=${value}`);
  return `[delivery-faults] ${fault}: ${parts.join(" ")}`;
}
