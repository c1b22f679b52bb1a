import { beforeAll, describe, it, vi } from "vitest";
import { api, newWorkspace } from "./helpers/api.js";
import { createEndpoint, type Deployment, startDeployment } from "./helpers/delivery.js";
import { type Receiver, startReceiver } from "./helpers/https-receiver.js";
import { eventually } from "./helpers/main-process.js";

// What each endpoint gets of its own, with two workers (servers in this process) delivering (docs/decisions.md,
// "One schedule: the delivery records"): a connection pool (endpoints on one host never wait for
// each other's sockets), its rate limit, a receiver's Retry-After, and every attempt in the log,
// those of resends included. Retries wait 50 ms, then 2 s, so a Retry-After of 1 s shows.

const SLOW = 90_000;
vi.setConfig({ testTimeout: 180_000 });

let deployment: Deployment;
let baseUrl: string;

beforeAll(async () => {
  deployment = await startDeployment({
    WEBHOOK_ENDPOINT_CONCURRENCY: "1",
    WEBHOOK_RETRY_DELAYS: "50ms,2s",
    WEBHOOK_TIMEOUT_MS: "20000",
  });
  const apiProcess = await deployment.start("api");
  await Promise.all([deployment.start("worker"), deployment.start("worker")]);
  baseUrl = await apiProcess.baseUrl;
});

/** A workspace of its own, so no endpoint of another test receives its events. */
const workspace = () => newWorkspace(undefined, baseUrl);

const arrivals = (receiver: Receiver, count: number) =>
  eventually(
    async () => receiver.received,
    (received) => received.length >= count,
    `${count} deliveries`,
    SLOW,
  );

// Each test has a workspace, endpoints and a receiver of its own; the timing checks are per endpoint
// and lower bounds, which a busy machine only lengthens: they run at once, across these blocks.
describe.concurrent("endpoints on one host", () => {
  it("keep sockets of their own: one stuck on a hanging path does not hold up the other", async ({
    expect,
  }) => {
    const { key, workspaceId } = await workspace();
    const host = await startReceiver();
    host.answer = (delivery) => (delivery.path.endsWith("/stuck") ? "hang" : { status: 200 });
    await createEndpoint({ key, baseUrl }, `${host.url}/stuck`, ["contact.updated"]);
    await createEndpoint({ key, baseUrl }, `${host.url}/free`, ["contact.updated"]);
    // One connection per endpoint (WEBHOOK_ENDPOINT_CONCURRENCY=1): with one pool per host the
    // stuck path's socket would be the only one, and the free path would wait behind it.
    const events = [];
    for (let i = 0; i < 5; i++) events.push(await deployment.emit(workspaceId, "contact.updated"));
    const free = await eventually(
      async () => host.received.filter((r) => r.path.endsWith("/free")),
      (list) => list.length >= events.length,
      "every event at the free path",
      SLOW,
    );
    expect(free.map((r) => r.headers["service-delivery"])).toEqual(events.map((e) => e._id));
    expect(host.received.filter((r) => r.path.endsWith("/stuck"))).toHaveLength(1);
    host.release();
  });
});

describe.concurrent("rate_limit", () => {
  it("is part of the endpoint: set on create, changed and cleared by PATCH, 400 out of range", async ({
    expect,
  }) => {
    const { key } = await workspace();
    const receiver = await startReceiver();
    const created = await api.post("/open/v1/webhook-endpoints", {
      key,
      baseUrl,
      body: { url: receiver.url, rate_limit: 5 },
    });
    expect(created.status).toBe(201);
    expect(created.body.rate_limit).toBe(5);
    const id = created.body.id as string;
    const changed = await api.patch(`/open/v1/webhook-endpoints/${id}`, {
      key,
      baseUrl,
      body: { rate_limit: 50 },
    });
    expect(changed.body.rate_limit).toBe(50);
    const cleared = await api.patch(`/open/v1/webhook-endpoints/${id}`, {
      key,
      baseUrl,
      body: { rate_limit: null },
    });
    expect(cleared.body.rate_limit).toBeNull();
    for (const bad of [0, -1, 1.5, 10_001, "5"]) {
      const refused = await api.patch(`/open/v1/webhook-endpoints/${id}`, {
        key,
        baseUrl,
        body: { rate_limit: bad },
      });
      expect(refused.status, JSON.stringify(bad)).toBe(400);
      expect(refused.body.error.param).toBe("rate_limit");
    }
  });

  it("holds across two workers: no faster than the limit", async ({ expect }) => {
    const { key, workspaceId } = await workspace();
    const receiver = await startReceiver();
    const created = await api.post("/open/v1/webhook-endpoints", {
      key,
      baseUrl,
      body: { url: receiver.url, events: ["ticket.updated"], rate_limit: 4 },
    });
    for (let i = 0; i < 12; i++) await deployment.emit(workspaceId, "ticket.updated");
    await arrivals(receiver, 12);
    // When each attempt started, by the workers' clock (the machine's): what a receiver sees also
    // carries the network's delays (a new connection's handshake on a busy machine).
    const attempts = await api.get(`/open/v1/webhook-endpoints/${created.body.id}/attempts?limit=100`, {
      key,
      baseUrl,
    });
    const times = (attempts.body.data as Array<{ created_at: string }>)
      .map((a) => Date.parse(a.created_at))
      .sort((a, b) => a - b);
    expect(times).toHaveLength(12);
    // Sends are booked 250 ms apart on the database's time, by one lane at a time: any five span a
    // second, less what the two workers' readings of that time may differ by (half a round trip to
    // the database each, a few ms here; docs/decisions.md, "One clock").
    for (let i = 4; i < times.length; i++) {
      expect((times[i] as number) - (times[i - 4] as number), `sends ${i - 4}..${i}`).toBeGreaterThanOrEqual(
        990,
      );
    }
  });
});

describe.concurrent("Retry-After", () => {
  it("holds the next attempt back as long as a 429 asked, within the retry schedule", async ({ expect }) => {
    const { key, workspaceId } = await workspace();
    const receiver = await startReceiver();
    receiver.answer = (_delivery, index) =>
      index === 0 ? { status: 429, headers: { "retry-after": "1" } } : { status: 200 };
    const endpoint = await createEndpoint({ key, baseUrl }, receiver.url, ["contact.created"]);
    await deployment.emit(workspaceId, "contact.created");
    const [first, second] = await arrivals(receiver, 2);
    // The schedule's first retry waits 50 ms; the receiver asked for a second.
    expect((second?.receivedAt as number) - (first?.receivedAt as number)).toBeGreaterThanOrEqual(990);
    const attempts = await api.get(`/open/v1/webhook-endpoints/${endpoint.id}/attempts`, { key, baseUrl });
    expect(attempts.body.data.map((a: { status_code: number }) => a.status_code)).toEqual([200, 429]);
  });
});

describe.concurrent("the attempts log", () => {
  it("has every attempt, those of a resend too, each beside its delivery", async ({ expect }) => {
    const { key, workspaceId } = await workspace();
    const receiver = await startReceiver();
    const endpoint = await createEndpoint({ key, baseUrl }, receiver.url, ["contact.created"]);
    const event = await deployment.emit(workspaceId, "contact.created");
    await arrivals(receiver, 1);
    const resent = await api.post(`/open/v1/events/${event._id}/resend`, { key, baseUrl, body: {} });
    expect(resent.status).toBe(202);
    await arrivals(receiver, 2);
    const attempts = await eventually(
      async () =>
        (await api.get(`/open/v1/webhook-endpoints/${endpoint.id}/attempts`, { key, baseUrl })).body
          .data as Array<{
          delivery_id: string;
          attempt: number;
          event_id: string;
        }>,
      (list) => list.length >= 2,
      "both attempts in the log",
      SLOW,
    );
    expect(attempts.map((a) => [a.event_id, a.attempt])).toEqual([
      [event._id, 1],
      [event._id, 1],
    ]);
    expect(new Set(attempts.map((a) => a.delivery_id)).size).toBe(2);
  });
});
