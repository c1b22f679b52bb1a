import { constructEvent } from "@deskline/webhook-verifier";
import { afterAll, describe, expect, it, vi } from "vitest";
import type { StoredEvent } from "../src/events/model.js";
import { newId } from "../src/platform/ids.js";
import type { WebhookDeliveryDoc } from "../src/webhooks/deliveries/store.js";
import { admin, api, newWorkspace } from "./helpers/api.js";
import {
  createEndpoint,
  type Deployment,
  type InProcessServer,
  startDeployment,
} from "./helpers/delivery.js";
import { type Receiver, startReceiver } from "./helpers/https-receiver.js";
import { eventually } from "./helpers/main-process.js";

// Webhook recovery: deliveries as records, resend, and recover, end to end: a real
// server (in this process; the SIGKILLed worker is a process) delivering over real HTTPS to receivers this file starts, with 50 ms retries.
// Each test has a deployment of its own (its database and server). One attempt at a time
// (WEBHOOK_CONCURRENCY and WEBHOOK_ENDPOINT_CONCURRENCY 1) makes "oldest event first" observable
// at the receiver.

const SLOW = 120_000;
vi.setConfig({ testTimeout: 240_000 });

type Json = Record<string, any>;

const servers: InProcessServer[] = [];
afterAll(() => {
  if (process.env.DEBUG_DELIVERY) for (const main of servers) console.log(main.output().slice(-5000));
});

/** A test's own deployment with one server (ROLE=all), and a workspace on it. */
async function startWorld() {
  const deployment: Deployment = await startDeployment({
    WEBHOOK_CONCURRENCY: "1",
    WEBHOOK_ENDPOINT_CONCURRENCY: "1",
    WEBHOOK_TIMEOUT_MS: "3000",
  });
  const main = await deployment.start("all");
  servers.push(main);
  const { baseUrl } = main;
  const { key, workspaceId } = await newWorkspace(undefined, baseUrl);
  return { deployment, baseUrl, key, workspaceId };
}
type World = Awaited<ReturnType<typeof startWorld>>;

/** The admin API of the test's server. */
const adminAt = (w: World, method: string, path: string) => admin(method, path, undefined, w.baseUrl);
const endpointFor = (w: World, url: string, events?: string[]) => createEndpoint(w, url, events);

const setStatus = async (w: World, endpointId: string, status: "enabled" | "disabled") => {
  const patched = await api.patch(`/open/v1/webhook-endpoints/${endpointId}`, {
    key: w.key,
    baseUrl: w.baseUrl,
    body: { status },
  });
  expect(patched.status).toBe(200);
};

const recover = (w: World, endpointId: string, body: Json) =>
  api.post(`/open/v1/webhook-endpoints/${endpointId}/recover`, { key: w.key, baseUrl: w.baseUrl, body });

/** The recovery once its job has gone through the whole window (`getWebhookRecovery`). */
async function finished(recoveryId: string, at: { key: string; baseUrl: string }): Promise<Json> {
  return eventually(
    async () => {
      const got = await api.get(`/open/v1/webhook-recoveries/${recoveryId}`, at);
      expect(got.status).toBe(200);
      return got.body as Json;
    },
    (recovery) => recovery.status === "succeeded",
    `recovery ${recoveryId} succeeded`,
    SLOW,
  );
}

/** Recovers and waits for the job: what it queued. */
const recoverAll = async (w: World, endpointId: string, body: Json) => {
  const recovery = await recover(w, endpointId, body);
  expect(recovery.status).toBe(202);
  return finished(recovery.body.id, w);
};

/** Every delivery of the endpoint (all pages), newest first. */
async function deliveriesOf(w: World, endpointId: string, query: Json = {}): Promise<Json[]> {
  const all: Json[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await api.get(`/open/v1/webhook-endpoints/${endpointId}/deliveries`, {
      key: w.key,
      baseUrl: w.baseUrl,
      query: { limit: 100, ...query, ...(after ? { starting_after: after } : {}) },
    });
    expect(page.status).toBe(200);
    all.push(...page.body.data);
    if (!page.body.has_more) return all;
    after = page.body.data.at(-1).id;
  }
}

const eventDeliveries = async (w: World, eventId: string) => {
  const page = await api.get(`/open/v1/events/${eventId}/deliveries`, {
    key: w.key,
    baseUrl: w.baseUrl,
    query: { limit: 100 },
  });
  expect(page.status).toBe(200);
  return page.body.data as Json[];
};

/** The event ids `receiver` got from index `from` on, each verified against the endpoint's secret. */
function verifiedIds(receiver: Receiver, secret: string, from = 0): string[] {
  return receiver.received.slice(from).map((delivery) => {
    const event = constructEvent(delivery.body, delivery.headers["service-signature"] as string, secret);
    expect(delivery.headers["service-delivery"]).toBe(event.id);
    expect(delivery.headers["webhook-id"]).toBe(event.id);
    return event.id;
  });
}

const secondsAgo = (seconds: number) => Math.floor(Date.now() / 1000) - seconds;

/** Waits until `receiver` has got the event `times` times. */
const receivedTimes = (receiver: Receiver, eventId: string, times: number, what: string) =>
  eventually(
    async () => receiver.deliveriesOf(eventId).length,
    (n) => n === times,
    what,
    SLOW,
  );

/** Emits 15 events to an endpoint that fails every delivery: the failures disable it. */
async function disableByFailures(w: World, endpointId: string): Promise<StoredEvent[]> {
  const { deployment, workspaceId, key, baseUrl } = w;
  const failed: StoredEvent[] = [];
  for (let i = 0; i < 15; i++) failed.push(await deployment.emit(workspaceId, "contact.created"));
  await eventually(
    async () => (await api.get(`/open/v1/webhook-endpoints/${endpointId}`, { key, baseUrl })).body.status,
    (status) => status === "disabled",
    "the endpoint disabled by 15 failed deliveries",
    SLOW,
  );
  return failed;
}

/**
 * The endpoint disabled: its failed deliveries are recorded, new events make none, and it cannot
 * be recovered. Returns the events emitted while it was down.
 */
async function expectDisabled(
  w: World,
  endpointId: string,
  failed: StoredEvent[],
  since: number,
): Promise<StoredEvent[]> {
  // Events while it is disabled make no delivery at all.
  const whileDown: StoredEvent[] = [];
  for (let i = 0; i < 3; i++) whileDown.push(await w.deployment.emit(w.workspaceId, "ticket.created"));
  for (const event of whileDown) expect(await eventDeliveries(w, event._id)).toEqual([]);
  const failedDeliveries = await deliveriesOf(w, endpointId, { status: "failed" });
  expect(failedDeliveries.map((d) => d.event_id).sort()).toEqual(failed.map((e) => e._id).sort());
  for (const delivery of failedDeliveries) {
    expect(delivery).toMatchObject({ attempts: 5, last_status_code: 503, next_attempt_at: null });
  }
  // A disabled endpoint cannot be recovered: enable it first.
  const refused = await recover(w, endpointId, { since });
  expect(refused.status).toBe(409);
  expect(refused.body.error).toMatchObject({ code: "webhook_endpoint_disabled", param: "id" });
  return whileDown;
}

/** Starts a recovery from `since` and waits for its job, which queues `queued` deliveries. */
async function expectRecoveryQueues(
  w: World,
  endpointId: string,
  since: number,
  queued: number,
): Promise<void> {
  const { key, baseUrl } = w;
  const recovery = await recover(w, endpointId, { since });
  expect(recovery.status).toBe(202);
  const { created_at } = (await api.get(`/open/v1/webhook-endpoints/${endpointId}`, { key, baseUrl })).body;
  // Answered at once; the job pages through the window on the worker. A `since` before the
  // endpoint was created starts the window at its creation.
  expect(recovery.body).toMatchObject({
    object: "webhook_recovery",
    endpoint_id: endpointId,
    since: created_at,
    status: "queued",
    scanned: 0,
    queued: 0,
    completed_at: null,
  });
  expect(recovery.body.id).toMatch(/^rcv_/);
  const done = await finished(recovery.body.id, w);
  expect(done).toMatchObject({ status: "succeeded", queued });
  expect(done.scanned).toBeGreaterThanOrEqual(queued);
  expect(Date.parse(done.completed_at)).toBeGreaterThanOrEqual(Date.parse(done.created_at));
}

/** The `missed` events reach `receiver` (from index `fixedAt` on) each once, oldest first. */
async function expectRecoveredOldestFirst(
  w: World,
  receiver: Receiver,
  endpoint: { id: string; secret: string },
  missed: string[],
  fixedAt: number,
): Promise<void> {
  const succeeded = await eventually(
    () => deliveriesOf(w, endpoint.id, { status: "succeeded" }),
    (list) => list.length === missed.length,
    "the recovered deliveries recorded as succeeded",
    SLOW,
  );
  await new Promise((done) => setTimeout(done, 500)); // a duplicate would arrive by now
  for (const delivery of succeeded) expect(delivery).toMatchObject({ last_status_code: 200 });
  // Oldest first (ids sort by creation time), each once. A loaded machine may fail an attempt
  // (a timeout, a connection cut) and its retry comes later: those are left out of the order.
  const retried = new Set(succeeded.filter((d) => d.attempts > 1).map((d) => d.event_id));
  const got = verifiedIds(receiver, endpoint.secret, fixedAt);
  expect(new Set(got)).toEqual(new Set(missed));
  expect(got.filter((id) => !retried.has(id))).toEqual([...missed].sort().filter((id) => !retried.has(id)));
}

/** A failed event, once recovered, has both deliveries; the attempts name theirs. */
async function expectBothDeliveries(w: World, endpointId: string, eventId: string): Promise<void> {
  const first = await eventDeliveries(w, eventId);
  expect(first.map((d) => d.status)).toEqual(["succeeded", "failed"]);
  const attempts = (
    await api.get(`/open/v1/webhook-endpoints/${endpointId}/attempts`, {
      key: w.key,
      baseUrl: w.baseUrl,
      query: { limit: 100 },
    })
  ).body.data as Json[];
  const ids = new Set(first.map((d) => d.id));
  expect(attempts.filter((a) => a.event_id === eventId).every((a) => ids.has(a.delivery_id))).toBe(true);
}

/**
 * What a recovery leaves when its process dies between recording a batch of deliveries and
 * scheduling their endpoint's lane: the deliveries, due, and no lane. Returns the delivery's id.
 */
async function insertUnscheduledDelivery(w: World, endpointId: string, event: StoredEvent): Promise<string> {
  const past = new Date(Date.now() - 60_000);
  const id = newId("dlv", past.getTime());
  await w.deployment.db.collection<WebhookDeliveryDoc>("webhook_deliveries").insertOne({
    _id: id,
    workspace_id: w.workspaceId,
    event_id: event._id,
    event_type: event.type,
    endpoint_id: endpointId,
    status: "pending",
    attempts: 0,
    last_attempt_at: null,
    last_status_code: null,
    next_attempt_at: past,
    created_at: past,
    updated_at: past,
    origin: "recover",
    pending_key: `${endpointId} ${event._id}`,
    due_at: past,
    lease_holder: null,
  });
  return id;
}

// The tests share nothing (a deployment each) and mostly wait on deliveries: they run at once,
// within each block and across these sibling concurrent blocks.
describe.concurrent("recovery after an outage: disabled and paused endpoints", () => {
  it("an endpoint failing until disabled, fixed, enabled and recovered gets every missed event once, oldest first", async ({
    expect,
  }) => {
    const w = await startWorld();
    const receiver = await startReceiver();
    receiver.answer = () => ({ status: 503 });
    const endpoint = await endpointFor(w, receiver.url);
    const since = secondsAgo(1);
    const failed = await disableByFailures(w, endpoint.id);
    const whileDown = await expectDisabled(w, endpoint.id, failed, since);

    receiver.answer = () => ({ status: 200 });
    const enabled = await adminAt(w, "POST", `/admin/v1/webhook-endpoints/${endpoint.id}/enable`);
    expect(enabled.status).toBe(200);
    const fixedAt = receiver.received.length;
    await expectRecoveryQueues(w, endpoint.id, since, 18);
    const missed = [...failed, ...whileDown].map((e) => e._id);
    await expectRecoveredOldestFirst(w, receiver, endpoint, missed, fixedAt);
    await expectBothDeliveries(w, endpoint.id, failed[0]?._id as string);
    // Nothing is missing any more: recovering again queues nothing.
    const again = await recoverAll(w, endpoint.id, { since, until: new Date().toISOString() });
    expect(again.queued).toBe(0);
  });

  it("a paused endpoint's due delivery is dropped, later events make none, and recover brings both back", async ({
    expect,
  }) => {
    const w = await startWorld();
    const { deployment, workspaceId } = w;
    const receiver = await startReceiver();
    receiver.answer = () => "hang"; // the first attempt times out (3 s); its retry is due while paused
    const endpoint = await endpointFor(w, receiver.url, ["contact.updated"]);
    const since = new Date(Date.now() - 1000).toISOString();
    const due = await deployment.emit(workspaceId, "contact.updated");
    await eventually(
      async () => receiver.received.length,
      (n) => n >= 1,
      "the first attempt",
      SLOW,
    );
    await setStatus(w, endpoint.id, "disabled");
    const [dropped] = await eventually(
      () => eventDeliveries(w, due._id),
      (list) => list[0]?.status === "dropped",
      "the delivery dropped",
      SLOW,
    );
    expect(dropped).toMatchObject({ endpoint_id: endpoint.id, attempts: 1, last_status_code: null });
    const later = await deployment.emit(workspaceId, "contact.updated");
    const ignored = await deployment.emit(workspaceId, "ticket.created"); // not subscribed
    expect(await eventDeliveries(w, later._id)).toEqual([]);

    receiver.answer = () => ({ status: 200 });
    receiver.release();
    await setStatus(w, endpoint.id, "enabled");
    const from = receiver.received.length;
    expect((await recoverAll(w, endpoint.id, { since })).queued).toBe(2);
    await eventually(
      async () => receiver.received.length - from,
      (n) => n >= 2,
      "both events",
      SLOW,
    );
    await new Promise((done) => setTimeout(done, 500));
    expect(verifiedIds(receiver, endpoint.secret, from)).toEqual([due._id, later._id]);
    expect(receiver.deliveriesOf(ignored._id)).toHaveLength(0);
    const statuses = await eventually(
      () => eventDeliveries(w, due._id),
      (list) => list[0]?.status === "succeeded",
      "the recovered delivery",
      SLOW,
    );
    expect(statuses.map((d) => d.status)).toEqual(["succeeded", "dropped"]);
  });
});

describe.concurrent("recovery after an outage: one at a time, and deliveries a dead process left", () => {
  it("one recovery of an endpoint at a time: a second while the first runs is 409, and each missed event is queued once", async ({
    expect,
  }) => {
    const w = await startWorld();
    const receiver = await startReceiver();
    // Held until both answered, so every queued delivery is still pending while they run.
    receiver.answer = () => "hang";
    const endpoint = await endpointFor(w, receiver.url);
    const since = secondsAgo(1);
    await setStatus(w, endpoint.id, "disabled");
    const missed: StoredEvent[] = [];
    for (let i = 0; i < 40; i++) missed.push(await w.deployment.emit(w.workspaceId, "message.received"));
    await setStatus(w, endpoint.id, "enabled");
    const both = await Promise.all([recover(w, endpoint.id, { since }), recover(w, endpoint.id, { since })]);
    const started = both.find((r) => r.status === 202);
    const refused = both.find((r) => r.status === 409);
    expect(started && refused, JSON.stringify(both.map((r) => r.body))).toBeTruthy();
    expect(refused?.body.error).toMatchObject({ code: "webhook_recovery_in_progress", param: "id" });
    expect(refused?.body.error.message).toContain(started?.body.id);
    expect(refused?.body.error.message).toContain("WEBHOOK_RECOVERIES_PER_ENDPOINT");
    expect((await finished(started?.body.id, w)).queued).toBe(missed.length);
    receiver.answer = () => ({ status: 200 });
    receiver.release();
    await eventually(
      async () => new Set(receiver.received.map((r) => r.headers["service-delivery"])).size,
      (n) => n >= missed.length,
      "every event",
      SLOW,
    );
    await new Promise((done) => setTimeout(done, 500));
    // The held first attempt may have timed out and been retried: once more for that event only.
    const got = verifiedIds(receiver, endpoint.secret);
    expect([...new Set(got)].sort()).toEqual(missed.map((e) => e._id).sort());
    expect(got.length).toBeLessThanOrEqual(missed.length + 1);
    // While deliveries are pending a third recovery queues nothing either; after, nothing is missing.
    expect((await recoverAll(w, endpoint.id, { since })).queued).toBe(0);
  });

  it("sends deliveries whose worker was never told of them (the process died first): the next round finds them", async ({
    expect,
  }) => {
    const w = await startWorld();
    const receiver = await startReceiver();
    const endpoint = await endpointFor(w, receiver.url);
    await setStatus(w, endpoint.id, "disabled");
    const event = await w.deployment.emit(w.workspaceId, "contact.created");
    await setStatus(w, endpoint.id, "enabled");
    const id = await insertUnscheduledDelivery(w, endpoint.id, event);
    await receivedTimes(receiver, event._id, 1, "the delivery");
    const [delivery] = await eventually(
      () => eventDeliveries(w, event._id),
      (list) => list[0]?.status === "succeeded",
      "its delivery settled",
      SLOW,
    );
    expect(delivery?.id).toBe(id);
    expect(verifiedIds(receiver, endpoint.secret)).toEqual([event._id]);
  });
});

/** A resend to an endpoint not subscribed to the event's type, or disabled, is refused. */
async function expectResendRefused(
  w: World,
  eventId: string,
  unsubscribedId: string,
  endpointId: string,
): Promise<void> {
  // Not subscribed to the type, disabled, or not in this workspace.
  const unsubscribed = await api.post(`/open/v1/events/${eventId}/resend`, {
    key: w.key,
    baseUrl: w.baseUrl,
    body: { endpoint_id: unsubscribedId },
  });
  expect(unsubscribed.status).toBe(400);
  expect(unsubscribed.body.error).toMatchObject({ code: "parameter_invalid", param: "endpoint_id" });
  await setStatus(w, endpointId, "disabled");
  const disabled = await api.post(`/open/v1/events/${eventId}/resend`, {
    key: w.key,
    baseUrl: w.baseUrl,
    body: { endpoint_id: endpointId },
  });
  expect(disabled.status).toBe(409);
  expect(disabled.body.error).toMatchObject({ code: "webhook_endpoint_disabled", param: "endpoint_id" });
}

/** The counters of resends, recoveries and dropped and recovered deliveries on /metrics. */
async function scrape(baseUrl: string) {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const value = (pattern: string) => Number(new RegExp(`^${pattern} (\\d+)`, "m").exec(text)?.[1] ?? 0);
  return {
    resends: value("deskline_webhook_resends_total"),
    recoveries: value("deskline_webhook_recoveries_total"),
    dropped: value('deskline_webhook_deliveries_total\\{outcome="dropped"\\}'),
    recovered: value('deskline_webhook_deliveries_queued_total\\{origin="recover"\\}'),
  };
}

describe.concurrent("resend", () => {
  it("sends a delivered event again with the same bytes and event id, to one endpoint or to all subscribed", async ({
    expect,
  }) => {
    const w = await startWorld();
    const { deployment, workspaceId, key, baseUrl } = w;
    const receiver = await startReceiver();
    const other = await startReceiver();
    const endpoint = await endpointFor(w, receiver.url, ["ticket.updated"]);
    const second = await endpointFor(w, other.url);
    const elsewhere = await endpointFor(w, "https://never-contacted.invalid/hooks", ["contact.created"]);
    const event = await deployment.emit(workspaceId, "ticket.updated");
    await receivedTimes(receiver, event._id, 1, "the delivery");
    await receivedTimes(other, event._id, 1, "the other one");

    const resent = await api.post(`/open/v1/events/${event._id}/resend`, {
      key,
      baseUrl,
      body: { endpoint_id: endpoint.id },
    });
    expect(resent.status).toBe(202);
    expect(resent.body).toMatchObject({ object: "list", has_more: false });
    expect(resent.body.data).toHaveLength(1);
    expect(resent.body.data[0]).toMatchObject({
      event_id: event._id,
      endpoint_id: endpoint.id,
      status: "pending",
      attempts: 0,
    });
    await receivedTimes(receiver, event._id, 2, "the resend");
    const [first, again] = receiver.deliveriesOf(event._id);
    expect(again?.body.equals(first?.body as Buffer)).toBe(true);
    expect(verifiedIds(receiver, endpoint.secret)).toEqual([event._id, event._id]);

    // Without endpoint_id: every enabled endpoint subscribed to the type (not `elsewhere`).
    const toAll = await api.post(`/open/v1/events/${event._id}/resend`, { key, baseUrl, body: {} });
    expect(toAll.status).toBe(202);
    expect(toAll.body.data.map((d: Json) => d.endpoint_id).sort()).toEqual([endpoint.id, second.id].sort());
    await receivedTimes(other, event._id, 2, "the resend to all");
    const list = await eventually(
      () => eventDeliveries(w, event._id),
      // `endpoint`: the first, the resend to it, the resend to all; `second`: the first and the last.
      (l) => l.length === 5 && l.every((d) => d.status === "succeeded"),
      "five succeeded deliveries",
      SLOW,
    );
    expect(list.some((d) => d.endpoint_id === elsewhere.id)).toBe(false);

    await expectResendRefused(w, event._id, elsewhere.id, endpoint.id);
  });

  it("counts resends, recoveries and dropped deliveries on /metrics", async ({ expect }) => {
    const w = await startWorld();
    const { deployment, workspaceId, key, baseUrl } = w;
    const before = await scrape(baseUrl);
    const receiver = await startReceiver();
    const endpoint = await endpointFor(w, receiver.url);
    const event = await deployment.emit(workspaceId, "contact.created");
    await receivedTimes(receiver, event._id, 1, "the delivery");
    expect((await api.post(`/open/v1/events/${event._id}/resend`, { key, baseUrl })).status).toBe(202);
    await setStatus(w, endpoint.id, "disabled");
    await deployment.emit(workspaceId, "contact.created");
    await setStatus(w, endpoint.id, "enabled");
    expect((await recoverAll(w, endpoint.id, { since: secondsAgo(30) })).queued).toBe(1);
    const after = await scrape(baseUrl);
    expect(after.resends - before.resends).toBeGreaterThanOrEqual(1);
    expect(after.recoveries - before.recoveries).toBeGreaterThanOrEqual(1);
    expect(after.recovered - before.recovered).toBeGreaterThanOrEqual(1);
    expect(await fetch(`${baseUrl}/metrics`).then((r) => r.text())).toMatch(
      /# HELP deskline_webhook_deliveries_total .*dropped/,
    );
  });
});

/**
 * A deployment of its own with an API process, and a workspace whose one endpoint, on a receiver
 * that answers 200, is disabled.
 */
async function disabledEndpointDeployment() {
  // A 4 s lease (WEBHOOK_LEASE_MS; past the 1 s timeout plus the 2 s margin) instead of 1 s + 30 s:
  // one worker runs at a time here, so the killed one's leases are all there is to wait out.
  const w = await startDeployment({ WEBHOOK_TIMEOUT_MS: "1000", WEBHOOK_LEASE_MS: "4000" });
  const apiProcess = await w.start("api");
  const url = await apiProcess.baseUrl;
  const world = await newWorkspace(undefined, url);
  const receiver = await startReceiver();
  receiver.answer = () => ({ status: 200, delayMs: 20 });
  const created = await api.post("/open/v1/webhook-endpoints", {
    key: world.key,
    baseUrl: url,
    body: { url: receiver.url },
  });
  const endpointId = created.body.id as string;
  const patch = (status: string) =>
    api.patch(`/open/v1/webhook-endpoints/${endpointId}`, {
      key: world.key,
      baseUrl: url,
      body: { status },
    });
  expect((await patch("disabled")).status).toBe(200);
  return { w, url, world, receiver, endpointId, patch };
}

/** Waits until `receiver` has got every one of `missed` and the endpoint has no delivery pending. */
async function expectAllDelivered(
  receiver: Receiver,
  missed: StoredEvent[],
  at: { key: string; baseUrl: string; endpointId: string },
): Promise<void> {
  const got = new Set<string>();
  await eventually(
    async () => {
      for (const r of receiver.received) got.add(r.headers["service-delivery"] as string);
      return got.size;
    },
    (n) => n === missed.length,
    "every missed event",
    SLOW,
  );
  expect([...got].sort()).toEqual(missed.map((e) => e._id).sort());
  const settled = await eventually(
    async () => {
      const page = await api.get(`/open/v1/webhook-endpoints/${at.endpointId}/deliveries`, {
        key: at.key,
        baseUrl: at.baseUrl,
        query: { status: "pending", limit: 100 },
      });
      return page.body.data as Json[];
    },
    (pending) => pending.length === 0,
    "no delivery left pending",
    SLOW,
  );
  expect(settled).toEqual([]);
}

describe.concurrent("a worker SIGKILLed during a recovery", () => {
  it("loses nothing: after a restart every missed event is delivered and every delivery succeeds", async ({
    expect,
  }) => {
    const { w, url, world, receiver, endpointId, patch } = await disabledEndpointDeployment();
    const since = secondsAgo(1);
    // The process starts (seconds) while the events are recorded: a disabled endpoint gets no
    // deliveries, so it has nothing to send before the recovery.
    const starting = w.startProcess("worker", {
      WEBHOOK_CONCURRENCY: "4",
      WEBHOOK_ENDPOINT_CONCURRENCY: "4",
    });
    const missed: StoredEvent[] = [];
    for (let i = 0; i < 150; i++) missed.push(await w.emit(world.workspaceId, "ticket.updated"));
    expect((await patch("enabled")).status).toBe(200);
    const first = await starting;
    const recovery = await api.post(`/open/v1/webhook-endpoints/${endpointId}/recover`, {
      key: world.key,
      baseUrl: url,
      body: { since },
    });
    expect(recovery.status).toBe(202);
    expect((await finished(recovery.body.id, { key: world.key, baseUrl: url })).queued).toBe(missed.length);
    await eventually(
      async () => receiver.received.length,
      (n) => n >= 20,
      "the recovery under way",
      SLOW,
    );
    first.child.kill("SIGKILL");
    await first.exited;
    expect(receiver.received.length).toBeLessThan(missed.length);
    // A new worker takes over the killed one's lane and leased deliveries once they expire (4 s).
    await w.start("worker", { WEBHOOK_CONCURRENCY: "4", WEBHOOK_ENDPOINT_CONCURRENCY: "4" });
    await expectAllDelivered(receiver, missed, { key: world.key, baseUrl: url, endpointId });
    const deliveries = w.db.collection("webhook_deliveries");
    expect(await deliveries.countDocuments({ endpoint_id: endpointId, status: "succeeded" })).toBe(
      missed.length,
    );
    // At most the attempts in flight when the worker died were sent twice.
    expect(receiver.received.length - missed.length).toBeLessThanOrEqual(8);
  });
});
