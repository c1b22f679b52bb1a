// Deliveries, resend and recover through the SDK, against a real server process that
// delivers (ROLE=all, retries 50 ms apart) to an HTTPS receiver this file starts on 127.0.0.1;
// every answer is checked against the spec.
import { eventually, newWorkspace, type Receiver, startOneAtATime, startReceiver } from "@deskline/test-kit";
import { beforeAll, describe, expect, it, vi } from "vitest";
import {
  ConflictError,
  type Deskline,
  InvalidRequestError,
  NotFoundError,
  type WebhookDelivery,
} from "../src/index.js";
import { checkedClient } from "./helpers.js";

// Deliveries share two cores with everything else running: waits are generous, never timed.
const SLOW = 120_000;
vi.setConfig({ testTimeout: 240_000 });

let deskline: Deskline;
let receiver: Receiver;

beforeAll(async () => {
  const baseUrl = await startOneAtATime();
  const { key } = await newWorkspace(undefined, baseUrl);
  deskline = checkedClient({ apiKey: key, baseUrl });
  receiver = await startReceiver();
}, 180_000);

/** The event ids the receiver got with a 2xx answer, in the order they arrived. */
const deliveredIds = (from: number) =>
  receiver.received.slice(from).map((delivery) => delivery.headers["service-delivery"]);

type Endpoint = Awaited<ReturnType<Deskline["webhookEndpoints"]["create"]>>;

/** An endpoint whose receiver answers 503 to three contact.created events, until each delivery fails. */
async function threeFailedDeliveries() {
  receiver.answer = () => ({ status: 503 });
  const endpoint = await deskline.webhookEndpoints.create({
    url: receiver.url,
    events: ["contact.created"],
  });
  for (const name of ["Missed 1", "Missed 2", "Missed 3"]) await deskline.contacts.create({ name });

  // Each delivery fails once its retries are spent; `limit: 1` makes the walk page three times.
  const failed: WebhookDelivery[] = await eventually(
    () => deskline.webhookEndpoints.deliveries(endpoint.id, { status: "failed", limit: 1 }).toArray(),
    (deliveries) => deliveries.length === 3,
    "three failed deliveries",
    SLOW,
  );
  for (const delivery of failed) {
    expect(delivery).toMatchObject({
      object: "webhook_delivery",
      endpoint_id: endpoint.id,
      event_type: "contact.created",
      status: "failed",
      last_status_code: 503,
      next_attempt_at: null,
    });
    expect(delivery.attempts).toBeGreaterThan(1);
  }
  // Ids sort by creation time: the events oldest first. (The deliveries run newest first by their
  // own ids, which the relay may mint in another order for events made a moment apart.)
  const missed = failed.map((delivery) => delivery.event_id).sort();
  expect(await deskline.events.deliveries(missed[0] as string).toArray()).toEqual(
    failed.filter((delivery) => delivery.event_id === missed[0]),
  );
  return { endpoint, failed, missed };
}

/** An event made while the endpoint is paused by its owner, which makes no delivery at all. */
async function eventWhilePaused(endpoint: Endpoint) {
  await deskline.webhookEndpoints.update(endpoint.id, { status: "disabled" });
  await deskline.contacts.create({ name: "While paused" });
  const [paused] = (await deskline.events.list({ type: ["contact.created"], limit: 1 })).data;
  if (!paused) throw new Error("the paused event was not recorded");
  expect(await deskline.events.deliveries(paused.id).toArray()).toEqual([]);
  return paused;
}

/** The receiver answers again; the preview counts, the recovery runs, and its readings end in success. */
async function recoverWithPreview(endpoint: Endpoint, since: number, pausedId: string) {
  receiver.answer = () => ({ status: 200 });
  const from = receiver.received.length;
  await deskline.webhookEndpoints.update(endpoint.id, { status: "enabled" });
  // The dry run first: what the recovery will queue, by reason, and nothing queued.
  const preview = await deskline.webhookEndpoints.previewRecovery(endpoint.id, { since });
  expect(preview).toMatchObject({
    object: "webhook_recovery_preview",
    endpoint_id: endpoint.id,
    would_queue: { total: 4, failed: 3, dropped: 0, never_sent: 1 },
  });
  expect(await deskline.events.deliveries(pausedId).toArray()).toEqual([]);
  // Answered at once; the server's workers go through the window, and waitForRecovery follows.
  const started = await deskline.webhookEndpoints.recover(endpoint.id, { since });
  expect(started).toMatchObject({ object: "webhook_recovery", endpoint_id: endpoint.id, status: "queued" });
  expect(started.id).toMatch(/^rcv_/);
  const readings: string[] = [];
  const recovery = await deskline.webhookEndpoints.waitForRecovery(started.id, {
    intervalMs: 50,
    onProgress: (r) => readings.push(r.status),
  });
  expect(recovery).toMatchObject({ id: started.id, status: "succeeded", queued: 4 });
  expect(readings.at(-1)).toBe("succeeded");
  // The same recovery; its `deliveries` are counted when asked, so they may have moved on.
  const { deliveries: _, ...read } = await deskline.webhookEndpoints.getRecovery(started.id);
  expect(recovery).toMatchObject(read);
  return { started, from };
}

/** Each missed event delivered once, newest first, each delivery counted on the recovery. */
async function expectRecovered(endpoint: Endpoint, recoveryId: string, from: number, events: string[]) {
  await eventually(
    async () => deliveredIds(from),
    (ids) => ids.length >= 4,
    "the four missed events",
    SLOW,
  );
  // Each missed event once. The recovery queued them oldest first: its deliveries, listed newest
  // first, run newest event first. (The order they reach the receiver is the worker's; the
  // server's own recovery test holds that.)
  expect([...deliveredIds(from)].sort()).toEqual(events);
  const succeeded = await eventually(
    () => deskline.webhookEndpoints.deliveries(endpoint.id, { status: "succeeded" }).toArray(),
    (deliveries) => deliveries.length === 4,
    "four succeeded deliveries",
    SLOW,
  );
  expect(succeeded.map((delivery) => delivery.event_id)).toEqual([...events].reverse());
  expect(succeeded.map((delivery) => delivery.last_status_code)).toEqual([200, 200, 200, 200]);
  // The recovery's own deliveries, by its id, and their counts on the recovery.
  const ofRecovery = await deskline.webhookEndpoints
    .deliveries(endpoint.id, { recovery_id: recoveryId })
    .toArray();
  expect(ofRecovery.map((delivery) => [delivery.recovery_id, delivery.status])).toEqual(
    succeeded.map(() => [recoveryId, "succeeded"]),
  );
  expect((await deskline.webhookEndpoints.getRecovery(recoveryId)).deliveries).toEqual({
    succeeded: 4,
    failed: 0,
    pending: 0,
    dropped: 0,
  });
}

/** The endpoint's rating counts the failures and the successes; a delivery lists its attempts. */
async function expectRatedWithAttempts(endpoint: Endpoint, failed: WebhookDelivery[], firstMissed: string) {
  // The endpoint list rates each endpoint's newest deliveries: three failed, four succeeded.
  const [listed] = (await deskline.webhookEndpoints.list()).data.filter((e) => e.id === endpoint.id);
  expect(listed?.recent_deliveries).toMatchObject({
    counted: 7,
    succeeded: 4,
    failed: 3,
    success_rate: 4 / 7,
  });
  // One delivery's attempts: the failed first delivery of the first missed event made several.
  const firstFailed = failed.find((delivery) => delivery.event_id === firstMissed) as WebhookDelivery;
  const attempts = await deskline.webhookEndpoints
    .listAttempts(endpoint.id, { delivery_id: firstFailed.id })
    .toArray();
  expect(attempts.map((attempt) => [attempt.delivery_id, attempt.status_code])).toEqual(
    Array.from({ length: firstFailed.attempts }, () => [firstFailed.id, 503]),
  );
  // Each with the receiver's answer: its body as text.
  expect(attempts[0]?.response).toMatchObject({ body: "received", body_truncated: false });
}

describe("webhook deliveries: failed, then recovered", () => {
  it("lists failed deliveries page by page, refuses to recover a disabled endpoint, then recovers every missed event once, queued oldest first", async () => {
    const { endpoint, failed, missed } = await threeFailedDeliveries();

    // Paused by its owner: an event of that time makes no delivery at all.
    const paused = await eventWhilePaused(endpoint);

    // Since the first failure (the event's `created`, Unix seconds; the window is inclusive).
    const since = (await deskline.events.get(missed[0] as string)).created;
    const refused = await deskline.webhookEndpoints.recover(endpoint.id, { since }).catch((error) => error);
    expect(refused).toBeInstanceOf(ConflictError);
    expect(refused).toMatchObject({ status: 409, code: "webhook_endpoint_disabled" });

    const { started, from } = await recoverWithPreview(endpoint, since, paused.id);
    await expectRecovered(endpoint, started.id, from, [...missed, paused.id]);
    await expectRatedWithAttempts(endpoint, failed, missed[0] as string);

    // Safe to repeat: every event of the window has a succeeded delivery now. An RFC 3339 `since`
    // and an `until` say the same window.
    const again = await deskline.webhookEndpoints.recover(endpoint.id, {
      since: new Date(since * 1000).toISOString(),
      until: Math.floor(Date.now() / 1000),
    });
    expect((await deskline.webhookEndpoints.waitForRecovery(again.id, { intervalMs: 50 })).queued).toBe(0);
    expect(deliveredIds(from)).toHaveLength(4);
  });
});

describe("webhook deliveries: test events", () => {
  it("sends a test event: the catalog's example, signed, marked as a test, to one endpoint", async () => {
    receiver.answer = () => ({ status: 200 });
    const endpoint = await deskline.webhookEndpoints.create({
      url: receiver.url,
      events: ["contact.created"],
    });
    const delivery = await deskline.webhookEndpoints.sendTestEvent(endpoint.id, {
      event_type: "message.received",
    });
    expect(delivery).toMatchObject({
      endpoint_id: endpoint.id,
      event_type: "message.received",
      status: "pending",
    });
    const [arrived] = await eventually(
      async () => receiver.deliveriesOf(delivery.event_id),
      (list) => list.length === 1,
      "the test event",
      SLOW,
    );
    expect(JSON.parse(String(arrived?.body))).toMatchObject({ type: "message.received", test: true });
    // Resent in bulk, by delivery id, once it settled: one result per id.
    await eventually(
      () => deskline.webhookEndpoints.deliveries(endpoint.id, { status: "succeeded" }).toArray(),
      (list) => list.length === 1,
      "the test delivery settled",
      SLOW,
    );
    const bulk = await deskline.webhookEndpoints.resendDeliveries({ ids: [delivery.id, "dlv_none"] });
    expect(bulk.data.map((r) => [r.index, r.status])).toEqual([
      [0, "queued"],
      [1, "error"],
    ]);
    const tooMany = await deskline.webhookEndpoints
      .resendDeliveries({ ids: Array.from({ length: 101 }, (_, i) => `dlv_${i}x`) })
      .catch((error) => error);
    expect(tooMany).toMatchObject({ status: 400, code: "parameter_invalid", param: "ids" });
    // The deliveries of several events in one request: the test event's two (sent, resent), none
    // of an event id the workspace does not have.
    const ofEvents = await deskline.webhookEndpoints.listDeliveries({
      event_id: [delivery.event_id, "evt_none"],
    });
    expect(ofEvents.data.map((d) => [d.event_id, d.endpoint_id])).toEqual([
      [delivery.event_id, endpoint.id],
      [delivery.event_id, endpoint.id],
    ]);
    const tooManyEvents = await deskline.webhookEndpoints
      .listDeliveries({ event_id: Array.from({ length: 101 }, (_, i) => `evt_${i}x`) })
      .catch((error) => error);
    expect(tooManyEvents).toMatchObject({ status: 400, code: "parameter_invalid", param: "event_id" });
    const refused = await deskline.webhookEndpoints
      .sendTestEvent(endpoint.id, { event_type: "nope.nope" as "message.received" })
      .catch((error) => error);
    expect(refused).toBeInstanceOf(InvalidRequestError);
    expect(refused).toMatchObject({ status: 400, code: "parameter_invalid", param: "event_type" });
  });
});

describe("webhook deliveries: resends, and typed errors", () => {
  it("resends an event with the same id and bytes, to its subscribed endpoints or to one", async () => {
    receiver.answer = () => ({ status: 200 });
    const endpoint = await deskline.webhookEndpoints.create({
      url: receiver.url,
      events: ["ticket.created"],
    });
    await deskline.tickets.create({ subject: "Resend me" });
    const [event] = (await deskline.events.list({ type: ["ticket.created"], limit: 1 })).data;
    if (!event) throw new Error("the ticket's event was not recorded");
    // Settled, not just received: a pending delivery would be left to itself (not queued twice).
    await eventually(
      () => deskline.events.deliveries(event.id).toArray(),
      (deliveries) => deliveries.length === 1 && deliveries[0]?.status === "succeeded",
      "the first delivery",
      SLOW,
    );

    const queued = await deskline.events.resend(event.id);
    expect(queued).toMatchObject({ object: "list", has_more: false });
    expect(queued.data).toHaveLength(1);
    expect(queued.data[0]).toMatchObject({ event_id: event.id, endpoint_id: endpoint.id, status: "pending" });
    const [first, second] = await eventually(
      async () => receiver.deliveriesOf(event.id),
      (deliveries) => deliveries.length === 2,
      "the resent delivery",
      SLOW,
    );
    expect(second?.body.equals(first?.body as Buffer)).toBe(true);
    expect(second?.headers["webhook-id"]).toBe(event.id);

    await eventually(
      () => deskline.events.deliveries(event.id).toArray(),
      (deliveries) => deliveries.every((delivery) => delivery.status === "succeeded"),
      "both deliveries settled",
      SLOW,
    );
    const toOne = await deskline.events.resend(event.id, { endpoint_id: endpoint.id });
    expect(toOne.data.map((delivery) => delivery.endpoint_id)).toEqual([endpoint.id]);
    await eventually(
      async () => receiver.deliveriesOf(event.id),
      (deliveries) => deliveries.length === 3,
      "the delivery resent to one endpoint",
      SLOW,
    );
    expect((await deskline.events.deliveries(event.id).toArray()).map((delivery) => delivery.id)).toEqual([
      toOne.data[0]?.id,
      queued.data[0]?.id,
      expect.stringMatching(/^dlv_/),
    ]);
  });

  it("answers typed errors: an unknown event, a window that ends before it starts, a disabled endpoint", async () => {
    const endpoint = await deskline.webhookEndpoints.create({
      url: "https://hooks.deskline-test.invalid/never",
      events: ["contact.updated"],
    });
    await expect(deskline.events.resend("evt_0000000000000000000000")).rejects.toBeInstanceOf(NotFoundError);
    await expect(deskline.events.deliveries("evt_0000000000000000000000").toArray()).rejects.toBeInstanceOf(
      NotFoundError,
    );
    const backwards = await deskline.webhookEndpoints
      .recover(endpoint.id, { since: "2026-03-02T00:00:00Z", until: "2026-03-01T00:00:00Z" })
      .catch((error) => error);
    expect(backwards).toBeInstanceOf(InvalidRequestError);
    expect(backwards).toMatchObject({ status: 400, code: "parameter_invalid" });

    await deskline.webhookEndpoints.update(endpoint.id, { status: "disabled" });
    const contact = await deskline.contacts.create({ name: "Updated later" });
    await deskline.contacts.update(contact.id, { name: "Updated" });
    const [updated] = (await deskline.events.list({ type: ["contact.updated"], limit: 1 })).data;
    await expect(
      deskline.events.resend(updated?.id as string, { endpoint_id: endpoint.id }),
    ).rejects.toMatchObject({ status: 409, code: "webhook_endpoint_disabled" });
    // Without an endpoint: every enabled endpoint subscribed to the type, here none.
    expect((await deskline.events.resend(updated?.id as string)).data).toEqual([]);
  });
});
