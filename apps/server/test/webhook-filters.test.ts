import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type EventFilter, matchesFilter } from "../src/webhooks/endpoints/filter.js";
import { api, newWorkspace } from "./helpers/api.js";
import { type Deployment, startDeployment } from "./helpers/delivery.js";
import { type Receiver, startReceiver } from "./helpers/https-receiver.js";
import { eventually } from "./helpers/main-process.js";

// Content filters on webhook endpoints (webhooks/endpoints/filter.ts): the language matched on
// bodies, its checks at create and update (`param` into the filter), and a real server delivering
// over HTTPS only what passes, counting the rest, and passing them over in resends and recoveries.

vi.setConfig({ testTimeout: 120_000 });

type Json = Record<string, any>;

describe("the filter language", () => {
  const body = {
    type: "ticket.created",
    created: 1_790_000_000,
    data: { priority: "urgent", tags: ["vip", "emea"], seats: 12, contact: { email: "ada@example.com" } },
  };
  const cases: [EventFilter, boolean][] = [
    [{ type: "ticket.created" }, true],
    [{ type: "ticket.updated" }, false],
    [{ data: { priority: { $in: ["urgent", "high"] } } }, true],
    [{ data: { priority: { $nin: ["urgent"] } } }, false],
    [{ data: { tags: "vip" } }, true],
    [{ data: { tags: { $in: ["apac", "emea"] } } }, true],
    [{ data: { tags: ["vip", "emea"] } }, true],
    [{ data: { seats: { $gte: 12, $lt: 13 } } }, true],
    [{ data: { seats: { $gt: "11" } } }, false],
    [{ data: { contact: { email: { $startsWith: "ada@" } } } }, true],
    [{ data: { missing: { $exists: false } } }, true],
    [{ data: { missing: { $neq: "x" } } }, true],
    [{ data: { missing: "x" } }, false],
    [{ data: { priority: { $not: { $eq: "low" } } } }, true],
    [{ $or: [{ type: "contact.created" }, { data: { seats: 12 } }] }, true],
    [{ $and: [{ type: "ticket.created" }, { $not: { data: { tags: "vip" } } }] }, false],
    [{ data: { $or: [{ priority: "low" }, { tags: "emea" }] } }, true],
  ];
  it.each(cases)("%j matches: %s", (filter, expected) => {
    expect(matchesFilter(filter, body)).toBe(expected);
  });
});

// One deployment and receiver for the tests of the content-filter block, in order: the first
// checks that no endpoint exists yet.
let deployment: Deployment;
let baseUrl: string;
let key: string;
let receiver: Receiver;

const create = (body: Json) => api.post("/open/v1/webhook-endpoints", { key, baseUrl, body });

/** The `ticket.created` event of a ticket. */
async function eventOf(ticketId: string): Promise<string> {
  const page = await api.get("/open/v1/events", {
    key,
    baseUrl,
    query: { type: "ticket.created", limit: 100 },
  });
  const event = (page.body.data as Json[]).find((e) => e.data.id === ticketId);
  if (!event) throw new Error(`no ticket.created event for ${ticketId}`);
  return event.id as string;
}

// The blocks of the content-filter describe, each a function so that the describe, which holds
// the hooks they share, fits a screen.
function filtersRefused() {
  it("refuses a filter that breaks a rule, with `param` pointing into it", async () => {
    const url = "https://hooks.invalid/in";
    const refusals: [unknown, string][] = [
      [{ data: { priority: { $regex: "urg" } } }, "filter.data.priority.$regex"],
      [{ $eq: "x" }, "filter.$eq"],
      [{ data: { priority: { $in: [] } } }, "filter.data.priority.$in"],
      [{ data: { seats: { $gt: 1, name: "x" } } }, "filter.data.seats.$gt"],
      [{ $or: [] }, "filter.$or"],
      [
        { data: { priority: { $in: Array.from({ length: 101 }, (_, i) => `p${i}`) } } },
        "filter.data.priority.$in",
      ],
      // Nine levels of objects, one more than the bound.
      [{ a: { b: { c: { d: { e: { f: { g: { h: { i: 1 } } } } } } } } }, "filter.a.b.c.d.e.f.g.h"],
      [{ data: { priority: { $exists: "yes" } } }, "filter.data.priority.$exists"],
    ];
    for (const [filter, param] of refusals) {
      const refused = await create({ url, filter });
      expect(refused.status, JSON.stringify(filter)).toBe(400);
      expect(refused.body.error).toMatchObject({ code: "parameter_invalid", param });
    }
    // Not an object at all: the schema's own check.
    const notObject = await create({ url, filter: ["x"] });
    expect(notObject.status).toBe(400);
    expect(await api.get("/open/v1/webhook-endpoints", { key, baseUrl })).toMatchObject({
      body: { data: [] },
    });
  });
}

function filteredDeliveries() {
  it("delivers only the events that pass, counts the rest, and takes a new filter or none on update", async () => {
    const filter = { data: { priority: { $in: ["urgent"] } } };
    const created = await create({ url: receiver.url, events: ["ticket.created"], filter });
    expect(created.status).toBe(201);
    expect(created.body.filter).toEqual(filter);
    const endpointId = created.body.id as string;
    const ticket = async (priority: string) => {
      const made = await api.post("/open/v1/tickets", {
        key,
        baseUrl,
        body: { subject: priority, priority },
      });
      expect(made.status).toBe(201);
      return made.body.id as string;
    };
    const urgent = await ticket("urgent");
    await ticket("normal");
    await ticket("low");
    const urgentToo = await ticket("urgent");
    const delivered = await eventually(
      async () => receiver.received.map((r) => JSON.parse(r.body.toString()).data.id as string),
      (ids) => ids.length >= 2,
      "the urgent tickets' deliveries",
    );
    // The last ticket's delivery arrived: the earlier ones were fanned out before it.
    expect(delivered.sort()).toEqual([urgent, urgentToo].sort());
    const stats = await eventually(
      async () => (await api.get(`/open/v1/webhook-endpoints/${endpointId}/stats`, { key, baseUrl })).body,
      (body) => body.filtered === 2,
      "two filtered events in the stats",
    );
    expect(stats.totals.succeeded).toBe(2);
    expect(stats.hourly.reduce((sum: number, hour: Json) => sum + hour.filtered, 0)).toBe(2);

    const cleared = await api.patch(`/open/v1/webhook-endpoints/${endpointId}`, {
      key,
      baseUrl,
      body: { filter: null },
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body.filter).toBeNull();
    const normal = await ticket("normal");
    await eventually(
      async () => receiver.deliveriesOf(await eventOf(normal)).length,
      (count) => count === 1,
      "the normal ticket delivered once the filter is gone",
    );
    const refused = await api.patch(`/open/v1/webhook-endpoints/${endpointId}`, {
      key,
      baseUrl,
      body: { filter: { data: { priority: { $between: [1, 2] } } } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.param).toBe("filter.data.priority.$between");
  });
}

function filteredRedeliveries() {
  it("passes over what the filter keeps out in a resend and a recovery", async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    const created = await create({
      url: receiver.url,
      events: ["ticket.created"],
      filter: { data: { subject: { $startsWith: "vip" } } },
    });
    const endpointId = created.body.id as string;
    const made = await api.post("/open/v1/tickets", {
      key,
      baseUrl,
      body: { subject: "routine", priority: "low" },
    });
    const event = await eventOf(made.body.id);
    const resent = await api.post(`/open/v1/events/${event}/resend`, {
      key,
      baseUrl,
      body: { endpoint_id: endpointId },
    });
    expect(resent.status).toBe(400);
    expect(resent.body.error).toMatchObject({ code: "parameter_invalid", param: "endpoint_id" });
    expect(resent.body.error.message).toContain("content filter");
    const preview = await api.post(`/open/v1/webhook-endpoints/${endpointId}/recover`, {
      key,
      baseUrl,
      body: { since, dry_run: true },
    });
    expect(preview.status).toBe(200);
    expect(preview.body.skipped.filtered).toBeGreaterThanOrEqual(1);
    expect(preview.body.would_queue.total).toBe(0);
  });
}

describe("webhook endpoints with a content filter", () => {
  beforeAll(async () => {
    deployment = await startDeployment({ WEBHOOK_TIMEOUT_MS: "3000" });
    baseUrl = (await deployment.start("all")).baseUrl;
    ({ key } = await newWorkspace(undefined, baseUrl));
    receiver = await startReceiver();
  });
  afterAll(() => receiver?.close());

  describe("refused at create", filtersRefused);
  describe("deliveries, counts and updates", filteredDeliveries);
  describe("resends and recoveries", filteredRedeliveries);
});
