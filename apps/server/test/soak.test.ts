import { describe, expect, inject, it, vi } from "vitest";
import { audit, type ListedEvent } from "../soak/audit.js";
import { failuresOf } from "../soak/report.js";
import { runSoak } from "../soak/soak.js";
import type { AcceptedWrite } from "../soak/writer.js";

// The crash trials (soak/, `pnpm soak`): their verdict as a table test, and a short run of the
// real thing on the run's database, with a lease of 9 s rather than the default 35 s that a worker
// killed mid-attempt holds its lanes for (the drain waits it out). It kills only the worker, and creates only before the trial:
// a create cut off between its write and its stored answer (an API kill, or the database cut) is
// applied twice when retried with its key (docs/decisions.md, "Crash trials", an open finding),
// and an API kill leaves a create's key locked for 60 s. `pnpm soak` runs everything.

vi.setConfig({ testTimeout: 150_000 });

const created = (kind: "contact" | "ticket", id: string): AcceptedWrite => ({ op: "create", kind, id });
const patched = (id: string, value: string): AcceptedWrite => ({ op: "patch", kind: "contact", id, value });
const event = (id: string, type: string, data: ListedEvent["data"]): ListedEvent => ({ id, type, data });

const writes = [created("contact", "con_1"), patched("con_1", "v1"), created("ticket", "tkt_1")];
const events = [
  event("evt_1", "contact.created", { id: "con_1" }),
  event("evt_2", "contact.updated", { id: "con_1", name: "v1" }),
  event("evt_3", "ticket.created", { id: "tkt_1" }),
];

// The audit's verdict on the writes above against events and deliveries that go wrong one way each.
const auditCases = [
  {
    case: "every write has its event, each delivered; a second delivery is a duplicate, not a loss",
    events,
    deliveries: { evt_1: 1, evt_2: 2, evt_3: 1 },
    expected: {
      missingEvents: [],
      extraEvents: [],
      createsAppliedTwice: 0,
      undelivered: [],
      duplicateDeliveries: 1,
      delivered: 3,
    },
  },
  {
    case: "a patch whose event carries another value is missing, and that event is extra",
    events: [events[0], event("evt_2", "contact.updated", { id: "con_1", name: "v0" }), events[2]],
    deliveries: { evt_1: 1, evt_2: 1, evt_3: 1 },
    expected: {
      missingEvents: ["contact.updated con_1 v1"],
      extraEvents: ["evt_2 contact.updated con_1 v0"],
      undelivered: [],
    },
  },
  {
    case: "a create applied twice shows as an extra event; an event never received is undelivered",
    events: [
      event("evt_1", "contact.created", { id: "con_1", name: "Ada" }),
      events[1],
      events[2],
      event("evt_4", "contact.created", { id: "con_2", name: "Ada" }),
    ],
    deliveries: { evt_1: 1, evt_2: 1, evt_3: 1, evt_9: 1 },
    expected: {
      extraEvents: ["evt_4 contact.created con_2"],
      createsAppliedTwice: 1,
      undelivered: ["evt_4"],
      strayDeliveries: 1,
    },
  },
  {
    case: "a write without its event is missing",
    events: events.slice(0, 2),
    deliveries: { evt_1: 1, evt_2: 1 },
    expected: { missingEvents: ["ticket.created tkt_1"], extraEvents: [], undelivered: [] },
  },
];

describe("the crash trials' audit", () => {
  it.each(auditCases)("$case", ({ events, deliveries, expected }) => {
    const result = audit({
      accepted: writes,
      events: events as ListedEvent[],
      deliveries: new Map(Object.entries(deliveries)),
    });
    expect(result).toMatchObject({ expectedEvents: 3, ...expected });
  });

  it("tells a delivery that failed by the retry rules (its attempts are recorded) from a lost one", () => {
    const result = audit({
      accepted: writes,
      events,
      deliveries: new Map([["evt_1", 1]]),
      attempts: [
        { id: "att_1", event_id: "evt_1", succeeded: true },
        { id: "att_2", event_id: "evt_2", succeeded: false },
      ],
    });
    expect(result.undelivered).toEqual(["evt_2", "evt_3"]);
    expect(result.undeliveredFailed).toBe(1);
  });

  it("excuses the event of a patch whose outcome the writer never learned, either way", () => {
    const unsure = patched("con_1", "v2");
    const both = [...events, event("evt_5", "contact.updated", { id: "con_1", name: "v2" })];
    for (const listed of [events, both]) {
      const result = audit({ accepted: writes, uncertain: [unsure], events: listed, deliveries: new Map() });
      expect(result.missingEvents).toEqual([]);
      expect(result.extraEvents).toEqual([]);
    }
  });
});

describe("a short crash trial", () => {
  it("kills the worker and cuts the database: no loss, 503s and never a 500 while it is away", async () => {
    const report = await runSoak({
      mongodbUri: inject("mongodbUri"),
      kills: { api: 0, worker: 1, all: 0 },
      // Longer than the driver's 2 s server selection, so requests see the database gone.
      outageMs: 5000,
      rate: 10,
      killGapMs: [200, 800],
      drainMs: 90_000,
      createsUnderFire: false,
      // Past the 5 s timeout plus the 2 s margin.
      env: { WEBHOOK_LEASE_MS: "9000" },
      log: () => {},
    });
    expect(failuresOf(report)).toEqual([]);
    expect(report.kills).toEqual({ api: 0, worker: 1, all: 0 });
    expect(report.unexpectedExits).toBe(0);
    expect(report.audit.expectedEvents).toBeGreaterThan(20);
    expect(report.audit.events).toBe(report.audit.expectedEvents);
    // While the database is away every answer is a 503: no 500, no hang.
    const outage = Object.fromEntries(report.answers.get("outage") ?? []);
    expect(Object.keys(outage)).toEqual(["503"]);
  });
});
