import { type AcceptedWrite, PATCHED_FIELD } from "./writer.js";

/**
 * The crash trials' verdict, pure: what the writer had accepted, the events the API lists and
 * what the receiver counted, compared. Every accepted create has exactly one `*.created` event and
 * every accepted patch exactly one `*.updated` carrying its value; no event without its write;
 * every event reached the receiver at least once. Duplicated deliveries are allowed (delivery is
 * at least once) and counted.
 */

/** An event as GET /open/v1/events lists it (only what the audit reads). */
export interface ListedEvent {
  id: string;
  type: string;
  data: { id: string; [field: string]: unknown };
}

/** A delivery attempt as the endpoint's attempts log lists it (only what the audit reads). */
export interface RecordedAttempt {
  id: string;
  event_id: string;
  succeeded: boolean;
}

export interface Audit {
  acceptedCreates: number;
  acceptedPatches: number;
  /** One per accepted write. */
  expectedEvents: number;
  events: number;
  /** Accepted writes without their event. */
  missingEvents: string[];
  /** Events no accepted write explains (a write applied twice, or one the writer was refused). */
  extraEvents: string[];
  /**
   * Creates that made two records: `*.created` events sharing a name or subject (the writer gives
   * each create its own), i.e. one request applied twice.
   */
  createsAppliedTwice: number;
  /** Events the receiver got at least once. */
  delivered: number;
  /** Events it never got. */
  undelivered: string[];
  /**
   * Of those, the ones whose delivery failed by the retry rules: attempts are recorded, none
   * succeeded (the attempts were cut by kills or timed out). The rest left no trace: lost.
   */
  undeliveredFailed: number;
  /** Deliveries beyond the first of their event. */
  duplicateDeliveries: number;
  /** Events delivered more than once. */
  eventsDeliveredTwice: number;
  /** Deliveries of event ids the API does not list. */
  strayDeliveries: number;
}

/** What one write must have emitted, and what an event says it records, in one comparable form. */
export function writeKey(write: AcceptedWrite): string {
  return write.op === "create"
    ? `${write.kind}.created ${write.id}`
    : `${write.kind}.updated ${write.id} ${write.value}`;
}

export function eventKey(event: ListedEvent): string {
  const [kind, action] = event.type.split(".") as [keyof typeof PATCHED_FIELD, string];
  if (action !== "updated" || !(kind in PATCHED_FIELD)) return `${event.type} ${event.data.id}`;
  return `${event.type} ${event.data.id} ${String(event.data[PATCHED_FIELD[kind]])}`;
}

export function audit(input: {
  accepted: AcceptedWrite[];
  /** Writes whose outcome is unknown: their events are neither missing nor extra. */
  uncertain?: AcceptedWrite[];
  events: ListedEvent[];
  deliveries: Map<string, number>;
  /** The endpoint's attempts log, if read. */
  attempts?: RecordedAttempt[];
}): Audit {
  const expected = new Map<string, number>();
  for (const write of input.accepted) {
    const key = writeKey(write);
    expected.set(key, (expected.get(key) ?? 0) + 1);
  }
  const excused = new Set((input.uncertain ?? []).map(writeKey));
  const extraEvents: string[] = [];
  for (const event of input.events) {
    const key = eventKey(event);
    const left = expected.get(key) ?? 0;
    if (left > 0) expected.set(key, left - 1);
    else if (!excused.delete(key)) extraEvents.push(`${event.id} ${key}`);
  }
  const labels = new Map<string, number>();
  for (const event of input.events) {
    if (!event.type.endsWith(".created")) continue;
    const label = `${event.type} ${String(event.data.name ?? event.data.subject)}`;
    labels.set(label, (labels.get(label) ?? 0) + 1);
  }
  const createsAppliedTwice = [...labels.values()].reduce((sum, n) => sum + n - 1, 0);
  const missingEvents = [...expected].flatMap(([key, left]) => Array<string>(left).fill(key));

  const listed = new Set(input.events.map((e) => e.id));
  let duplicateDeliveries = 0;
  let eventsDeliveredTwice = 0;
  let strayDeliveries = 0;
  for (const [eventId, count] of input.deliveries) {
    if (!listed.has(eventId)) strayDeliveries += count;
    else if (count > 1) {
      duplicateDeliveries += count - 1;
      eventsDeliveredTwice++;
    }
  }
  const undelivered = input.events.filter((e) => !input.deliveries.has(e.id)).map((e) => e.id);
  const attempted = new Set((input.attempts ?? []).map((a) => a.event_id));
  const undeliveredFailed = undelivered.filter((id) => attempted.has(id)).length;
  return {
    acceptedCreates: input.accepted.filter((w) => w.op === "create").length,
    acceptedPatches: input.accepted.filter((w) => w.op === "patch").length,
    expectedEvents: input.accepted.length,
    events: input.events.length,
    missingEvents,
    extraEvents,
    createsAppliedTwice,
    delivered: input.events.length - undelivered.length,
    undelivered,
    undeliveredFailed,
    duplicateDeliveries,
    eventsDeliveredTwice,
    strayDeliveries,
  };
}

/** A loss of any kind: a write without its event, an event never delivered, or a stray event. */
export function lossesOf(result: Audit): number {
  return result.missingEvents.length + result.undelivered.length + result.extraEvents.length;
}
