// `deskline events resend|deliveries` and `deskline webhooks endpoints recover|deliveries`: the
// built binary against a real server process that delivers (ROLE=all, retries 50 ms
// apart) to an HTTPS receiver this file starts, through a proxy that checks every answer against
// the spec. Each delivery that arrives is verified with the endpoint's secret.
import {
  api,
  eventually,
  newWorkspace,
  type Receiver,
  type SpecProxy,
  startOneAtATime,
  startReceiver,
  startSpecProxy,
} from "@deskline/test-kit";
import { constructEvent } from "@deskline/webhook-verifier";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { cli, jsonLines } from "./helpers.js";

// Deliveries share two cores with everything else running: waits are generous, never timed.
const SLOW = 120_000;
vi.setConfig({ testTimeout: 240_000 });

let upstream: string;
let proxy: SpecProxy;
let key: string;
let receiver: Receiver;

beforeAll(async () => {
  upstream = await startOneAtATime();
  proxy = await startSpecProxy(upstream);
  ({ key } = await newWorkspace(undefined, upstream));
  receiver = await startReceiver();
}, 180_000);
afterAll(() => proxy.close());
afterEach(() => {
  expect(proxy.problems()).toEqual([]);
});

/** `deskline <args>` with this file's key, through the spec-checking proxy. */
const run = (args: string[]) => cli(args, { key, env: { DESKLINE_BASE_URL: proxy.url } });
/** `deskline webhooks endpoints recover <args…>`, as `run` runs it. */
const recover = (...args: string[]) => run(["webhooks", "endpoints", "recover", ...args]);
const json = async (args: string[]) => {
  const result = await run([...args, "--json"]);
  expect(result.code, result.stderr).toBe(0);
  return jsonLines(result.stdout);
};
const createContact = async (name: string) =>
  expect((await api.post("/open/v1/contacts", { key, baseUrl: upstream, body: { name } })).status).toBe(201);

async function createEndpoint(events: string[]): Promise<{ id: string; secret: string }> {
  const args = ["webhooks", "endpoints", "create", "--url", receiver.url];
  for (const event of events) args.push("--event", event);
  const [endpoint] = await json(args);
  return endpoint;
}

// The outage test's phases, in the order it runs them; `Outage` is what the first phases learnt.
interface Outage {
  endpoint: { id: string; secret: string };
  failed: any[];
  paused: any;
  first: string;
  second: string;
  recovery: any;
  from: number;
}

/** An endpoint whose receiver answers 503: two events fail, listed as JSON and as a table. */
async function twoFailedDeliveries() {
  receiver.answer = () => ({ status: 503 });
  const endpoint = await createEndpoint(["contact.created"]);
  await createContact("Missed 1");
  await createContact("Missed 2");
  const failed = await eventually(
    () => json(["webhooks", "endpoints", "deliveries", endpoint.id, "--status", "failed"]),
    (deliveries) => deliveries.length === 2,
    "two failed deliveries",
    SLOW,
  );
  expect(failed.map((d) => [d.status, d.event_type, d.last_status_code])).toEqual([
    ["failed", "contact.created", 503],
    ["failed", "contact.created", 503],
  ]);
  const table = await run(["webhooks", "endpoints", "deliveries", endpoint.id, "--status", "failed"]);
  expect(table.stdout).toMatch(
    /^ID\s+STATUS\s+EVENT\s+TYPE\s+ATTEMPTS\s+LAST CODE\s+LAST ATTEMPT\s+NEXT ATTEMPT\s+CREATED$/m,
  );
  for (const delivery of failed) {
    expect(table.stdout).toMatch(
      new RegExp(
        `^${delivery.id}\\s+failed\\s+${delivery.event_id}\\s+contact\\.created\\s+\\d+\\s+503\\s`,
        "m",
      ),
    );
  }
  return { endpoint, failed };
}

/** Paused by its owner: the event of that time makes no delivery. */
async function eventWhilePaused(endpointId: string) {
  expect((await run(["webhooks", "endpoints", "update", endpointId, "--set", "status=disabled"])).code).toBe(
    0,
  );
  await createContact("While paused");
  const [paused] = await json(["events", "list", "--type", "contact.created", "--limit", "1"]);
  expect(await json(["events", "deliveries", paused.id])).toEqual([]);
  return paused;
}

/** A recovery of the paused endpoint is refused, the error naming the command that enables it. */
async function refusedUntilEnabled(endpointId: string): Promise<string> {
  const refused = await recover(endpointId, "--since", "1h");
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/status 409, code webhook_endpoint_disabled/);
  const enable = refused.stderr.match(/^ {2}enable it first: (deskline .*)$/m)?.[1];
  expect(enable).toBe(`deskline webhooks endpoints update ${endpointId} --set status=enabled`);
  const refusedJson = await recover(endpointId, "--since", "1h", "--json");
  expect(JSON.parse(refusedJson.stderr).error).toMatchObject({
    status: 409,
    code: "webhook_endpoint_disabled",
    hint: `enable it first: ${enable}`,
  });
  return enable as string;
}

/** The receiver fixed and the endpoint enabled: a preview, then a recovery since the first failure. */
async function previewThenRecover(endpointId: string, enable: string) {
  receiver.answer = () => ({ status: 200 });
  const from = receiver.received.length;
  expect((await run(enable.split(" ").slice(1))).code).toBe(0);
  // A preview first, which queues nothing; without --since, from the first failure.
  const [preview] = await json(["webhooks", "endpoints", "recover", endpointId, "--dry-run"]);
  expect(preview).toMatchObject({
    object: "webhook_recovery_preview",
    would_queue: { total: 3, failed: 2, dropped: 0, never_sent: 1 },
    skipped: { succeeded: 0, pending: 0, before_subscription: 0 },
  });
  const told = await recover(endpointId, "--dry-run");
  expect(told.stdout).toContain(
    `would queue 3 (failed 2, dropped 0, never sent 1); queue them: deskline webhooks endpoints recover ${endpointId} --since ${preview.since}`,
  );
  // --wait: answered once the server's workers have gone through the window.
  const [recovery] = await json(["webhooks", "endpoints", "recover", endpointId, "--wait"]);
  expect(recovery).toMatchObject({
    object: "webhook_recovery",
    endpoint_id: endpointId,
    status: "succeeded",
    queued: 3,
    scanned_until: recovery.until,
  });
  // The same recovery; its `deliveries` are counted when asked, so they may have moved on.
  const [{ deliveries: _, ...read }] = await json(["webhooks", "endpoints", "recovery", recovery.id]);
  expect(recovery).toMatchObject(read);
  return { from, recovery };
}

/** Each missed event arrives once, signed; the recovery's deliveries run newest event first. */
async function expectMissedDeliveredOnce({ endpoint, paused, first, second, recovery, from }: Outage) {
  const arrived = await eventually(
    async () => receiver.received.slice(from),
    (deliveries) => deliveries.length >= 3,
    "the three missed events",
    SLOW,
  );
  const events = arrived.map((d) =>
    constructEvent(d.body, d.headers["service-signature"] as string, endpoint.secret),
  );
  // Each missed event once (the order they arrive in is the worker's: the server's own recovery
  // test holds it to oldest first).
  expect(events.map((event) => event.id).sort()).toEqual([first, second, paused.id]);
  expect(arrived.map((d) => d.headers["service-delivery"])).toEqual(events.map((event) => event.id));

  // Queued oldest first: listed newest first, the recovery's deliveries run newest event first.
  const succeeded = await eventually(
    () => json(["webhooks", "endpoints", "deliveries", endpoint.id, "--status", "succeeded"]),
    (deliveries) => deliveries.length === 3,
    "three succeeded deliveries",
    SLOW,
  );
  expect(succeeded.map((d) => d.event_id)).toEqual([paused.id, second, first]);
  // The recovery's deliveries by its id, and their counts on the recovery.
  const ofRecovery = await json([
    "webhooks",
    "endpoints",
    "deliveries",
    endpoint.id,
    "--recovery-id",
    recovery.id,
  ]);
  expect(ofRecovery.map((d) => [d.event_id, d.recovery_id])).toEqual(
    [paused.id, second, first].map((id) => [id, recovery.id]),
  );
}

/** Where two events went, and the endpoint's rating of its newest deliveries. */
async function expectWhereEventsWent({ endpoint, first, second, recovery }: Outage) {
  // Where two events went, in one request: each its failed delivery and its recovered one.
  const ofTwo = await json(["webhooks", "deliveries", "--event-id", first, second]);
  expect(ofTwo.map((d) => `${d.event_id} ${d.status}`).sort()).toEqual(
    [`${first} failed`, `${first} succeeded`, `${second} failed`, `${second} succeeded`].sort(),
  );
  const ofTwoTable = await run(["webhooks", "deliveries", "--event-id", first, "--event-id", second]);
  expect(ofTwoTable.stdout).toMatch(/^ID\s+STATUS\s+EVENT\s+TYPE\s+ENDPOINT\s+ATTEMPTS\s/m);
  expect(ofTwoTable.stdout.match(/^dlv_/gm)).toHaveLength(4);
  // The endpoint list rates its newest deliveries: two failed, three succeeded.
  const listed = await json(["webhooks", "endpoints", "list"]);
  expect(listed.find((e) => e.id === endpoint.id).recent_deliveries).toMatchObject({
    counted: 5,
    succeeded: 3,
    failed: 2,
    success_rate: 0.6,
  });
  const listTable = await run(["webhooks", "endpoints", "list"]);
  expect(listTable.stdout).toMatch(new RegExp(`^${endpoint.id}\\s+enabled\\s.*\\s60%\\s+\\d{4}-`, "m"));
  const [counted] = await json(["webhooks", "endpoints", "recovery", recovery.id]);
  expect(counted.deliveries).toEqual({ succeeded: 3, failed: 0, pending: 0, dropped: 0 });
}

/** One delivery's attempts: the first failed delivery's, every one answered 503. */
async function expectAttemptsOfFirstFailure({ endpoint, failed }: Outage) {
  const [firstFailed] = failed;
  const listAttempts = ["webhooks", "endpoints", "attempts", endpoint.id, "--delivery-id", firstFailed.id];
  const attempts = await json(listAttempts);
  expect(attempts.map((a) => [a.delivery_id, a.status_code])).toEqual(
    Array.from({ length: firstFailed.attempts }, () => [firstFailed.id, 503]),
  );
  const attemptsTable = await run(listAttempts);
  expect(attemptsTable.stdout).toMatch(/^ID\s+DELIVERY\s+EVENT\s+ATTEMPT\s+CODE\s+MS\s+ERROR\s+STARTED$/m);
  expect(attemptsTable.stdout).toMatch(
    new RegExp(
      `^att_\\w+\\s+${firstFailed.id}\\s+${firstFailed.event_id}\\s+1\\s+503\\s+\\d+\\s+HTTP 503\\s`,
      "m",
    ),
  );
}

/** A test event of a type it does not even subscribe to: signed, marked, to this endpoint. */
async function expectTestEventDelivered({ endpoint }: Outage) {
  const [testDelivery] = await json([
    "webhooks",
    "endpoints",
    "test",
    endpoint.id,
    "--event-type",
    "ticket.created",
  ]);
  expect(testDelivery).toMatchObject({
    object: "webhook_delivery",
    endpoint_id: endpoint.id,
    status: "pending",
  });
  const [testArrived] = await eventually(
    async () => receiver.deliveriesOf(testDelivery.event_id),
    (list) => list.length === 1,
    "the test event",
    SLOW,
  );
  expect(
    constructEvent(
      testArrived?.body as Buffer,
      testArrived?.headers["service-signature"] as string,
      endpoint.secret,
    ),
  ).toMatchObject({ type: "ticket.created", test: true });
}

/** The failed deliveries again, chosen by id, with one that does not exist: exit 1, a row each. */
async function resendChosenDeliveries({ failed }: Outage) {
  const bulk = await run([
    "webhooks",
    "endpoints",
    "resend-deliveries",
    ...failed.map((d) => d.id),
    "dlv_none",
  ]);
  expect(bulk.code).toBe(1);
  expect(bulk.stdout).toMatch(/^ID\s+STATUS\s+NEW DELIVERY\s+ERROR$/m);
  for (const delivery of failed)
    expect(bulk.stdout).toMatch(new RegExp(`^${delivery.id}\\s+queued\\s+dlv_`, "m"));
  expect(bulk.stdout).toMatch(/^dlv_none\s+error\s+resource_missing: /m);
  const bulkJson = await run(["webhooks", "endpoints", "resend-deliveries", "--json", "dlv_none"]);
  expect(jsonLines(bulkJson.stdout)).toEqual([
    expect.objectContaining({ index: 0, id: "dlv_none", status: "error" }),
  ]);
}

/** Time filters take durations back from now, like --since. */
async function expectTimeFilters({ endpoint }: Outage) {
  const lastHour = await json(["webhooks", "endpoints", "deliveries", endpoint.id, "--created-after", "1h"]);
  expect(lastHour).toHaveLength(8); // with the test delivery and the two resent
  expect(await json(["webhooks", "endpoints", "deliveries", endpoint.id, "--created-before", "1h"])).toEqual(
    [],
  );
  const recovered = await json([
    "webhooks",
    "endpoints",
    "deliveries",
    endpoint.id,
    "--status",
    "succeeded",
    "--limit",
    "2",
  ]);
  expect(recovered.map((d) => d.id)).toEqual(
    lastHour
      .filter((d) => d.status === "succeeded")
      .slice(0, 2)
      .map((d) => d.id),
  );
}

/** Per event: the bulk resend's, the one recover made, the failed one, newest first. */
async function expectPerEventDeliveries({ endpoint, first }: Outage) {
  const perEvent = await eventually(
    () => json(["events", "deliveries", first]),
    (list) => list[0]?.status === "succeeded",
    "the resent delivery settled",
    SLOW,
  );
  expect(perEvent.map((d) => [d.status, d.endpoint_id])).toEqual([
    ["succeeded", endpoint.id],
    ["succeeded", endpoint.id],
    ["failed", endpoint.id],
  ]);
  const perEventTable = await run(["events", "deliveries", first]);
  expect(perEventTable.stdout).toMatch(/^ID\s+STATUS\s+ENDPOINT\s+ATTEMPTS\s/m);
}

describe("after an outage", () => {
  it("lists the failures, refuses to recover until the endpoint is enabled (saying how), then delivers every missed event once, queued oldest first", async () => {
    const { endpoint, failed } = await twoFailedDeliveries();
    const paused = await eventWhilePaused(endpoint.id);
    const enable = await refusedUntilEnabled(endpoint.id);

    // The receiver is fixed; run the command the error gave, then recover since the first failure.
    // The first failure: the oldest of the failed deliveries' events (ids sort by creation time).
    const [first, second] = failed.map((d) => d.event_id).sort();
    const { from, recovery } = await previewThenRecover(endpoint.id, enable);
    const o: Outage = { endpoint, failed, paused, first, second, recovery, from };

    await expectMissedDeliveredOnce(o);
    await expectWhereEventsWent(o);
    await expectAttemptsOfFirstFailure(o);
    await expectTestEventDelivered(o);
    await resendChosenDeliveries(o);
    const badType = await run([
      "webhooks",
      "endpoints",
      "test",
      endpoint.id,
      "--event-type",
      "ticket.exploded",
    ]);
    expect(badType.code).toBe(1);
    expect(badType.stderr).toMatch(/event_type/);
    // Safe to repeat, here with a duration: nothing is missing any more. A table for people.
    const again = await recover(endpoint.id, "--since", "2d", "--wait");
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^object\s+webhook_recovery$/m);
    expect(again.stdout).toMatch(/^status\s+succeeded$/m);
    expect(again.stdout).toMatch(/^queued\s+0$/m);
    // The three missed events, the test event and the two failed deliveries resent.
    await eventually(
      async () => receiver.received.length,
      (n) => n >= from + 6,
      "six deliveries",
      SLOW,
    );
    expect(receiver.received.length).toBe(from + 6);

    await expectTimeFilters(o);
    await expectPerEventDeliveries(o);
  });
});

describe("resend", () => {
  it("sends an event again with the same id and bytes, to its endpoints or to one", async () => {
    receiver.answer = () => ({ status: 200 });
    const endpoint = await createEndpoint(["ticket.created"]);
    expect(
      (await api.post("/open/v1/tickets", { key, baseUrl: upstream, body: { subject: "Again" } })).status,
    ).toBe(201);
    const [event] = await json(["events", "list", "--type", "ticket.created", "--limit", "1"]);
    const settled = (deliveries: any[]) => deliveries.every((d) => d.status === "succeeded");
    await eventually(
      () => json(["events", "deliveries", event.id]),
      (d) => d.length === 1 && settled(d),
      "the first delivery",
      SLOW,
    );

    const resent = await run(["events", "resend", event.id]);
    expect(resent.code, resent.stderr).toBe(0);
    expect(resent.stdout).toMatch(new RegExp(`^queued 1 delivery of ${event.id}:$`, "m"));
    expect(resent.stdout).toMatch(new RegExp(`^dlv_\\w+\\s+pending\\s+${endpoint.id}\\s`, "m"));
    const [original, again] = await eventually(
      async () => receiver.deliveriesOf(event.id),
      (deliveries) => deliveries.length === 2,
      "the resent delivery",
      SLOW,
    );
    expect(again?.body.equals(original?.body as Buffer)).toBe(true);
    expect(
      constructEvent(again?.body as Buffer, again?.headers["service-signature"] as string, endpoint.secret)
        .id,
    ).toBe(event.id);

    await eventually(() => json(["events", "deliveries", event.id]), settled, "both settled", SLOW);
    const toOne = await json(["events", "resend", event.id, "--endpoint", endpoint.id]);
    expect(toOne.map((d) => [d.object, d.event_id, d.endpoint_id, d.status])).toEqual([
      ["webhook_delivery", event.id, endpoint.id, "pending"],
    ]);
    await eventually(
      async () => receiver.deliveriesOf(event.id),
      (d) => d.length === 3,
      "the third",
      SLOW,
    );
  });
});

describe("errors say what to do next", () => {
  it("a disabled endpoint, an event past retention, a bad time, a backwards window, an unknown endpoint", async () => {
    const endpoint = await createEndpoint(["contact.updated"]);
    expect(
      (await run(["webhooks", "endpoints", "update", endpoint.id, "--set", "status=disabled"])).code,
    ).toBe(0);
    const contact = (await api.post("/open/v1/contacts", { key, baseUrl: upstream, body: { name: "Up" } }))
      .body;
    await api.patch(`/open/v1/contacts/${contact.id}`, { key, baseUrl: upstream, body: { name: "Updated" } });
    const [updated] = await json(["events", "list", "--type", "contact.updated", "--limit", "1"]);

    const disabled = await run(["events", "resend", updated.id, "--endpoint", endpoint.id]);
    expect(disabled.code).toBe(1);
    expect(disabled.stderr).toContain(
      `enable it first: deskline webhooks endpoints update ${endpoint.id} --set status=enabled`,
    );
    const none = await run(["events", "resend", updated.id]);
    expect(none.stdout).toMatch(
      /^queued no delivery of evt_\w+: no enabled endpoint subscribes to its type, or each has one pending$/m,
    );

    const gone = await run(["events", "resend", "evt_0000000000000000000000"]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/status 404[\s\S]*events are kept 30 days/);

    const badTime = await recover(endpoint.id, "--since", "yesterday");
    expect(badTime.code).toBe(2);
    expect(badTime.stderr).toContain(
      "--since 'yesterday': give an event id (evt_…: from that event on), a duration",
    );
    // Without --since, from the first failure since it was last healthy: this one has none.
    const noFailure = await recover(endpoint.id);
    expect(noFailure.code).toBe(1);
    expect(noFailure.stderr).toMatch(
      /no first failure to start from[\s\S]*status 400, code parameter_missing/,
    );

    expect(
      (await run(["webhooks", "endpoints", "update", endpoint.id, "--set", "status=enabled"])).code,
    ).toBe(0);
    const backwards = await recover(endpoint.id, "--since", "1h", "--until", "2h");
    expect(backwards.code).toBe(1);
    expect(backwards.stderr).toMatch(/status 400, code parameter_invalid/);

    const { key: contactsOnly } = await newWorkspace(["contacts:read"], upstream);
    const forbidden = await cli(["webhooks", "endpoints", "recover", endpoint.id, "--since", "1h"], {
      key: contactsOnly,
      env: { DESKLINE_BASE_URL: proxy.url },
    });
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toMatch(/status 403[\s\S]*use a key with the webhooks:manage scope/);

    const unknown = await run(["webhooks", "endpoints", "deliveries", "we_0000000000000000000000"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/status 404[\s\S]*deskline webhooks endpoints list/);
  });
});

describe("content filters", () => {
  it("creates an endpoint with --filter, refuses one that is not a JSON object, and names the faulty operator", async () => {
    const create = (filter: string) =>
      run([
        "webhooks",
        "endpoints",
        "create",
        "--url",
        "https://hooks.invalid/filtered",
        "--event",
        "ticket.created",
        "--filter",
        filter,
      ]);
    const filter = { data: { priority: { $in: ["urgent"] } } };
    const made = await create(JSON.stringify(filter));
    expect(made.code, made.stderr).toBe(0);
    const [listed] = await json(["webhooks", "endpoints", "list", "--limit", "1"]);
    expect(listed.filter).toEqual(filter);

    const notJson = await create("{priority: urgent}");
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toContain("must be JSON");
    const unknownOperator = await create('{"data":{"priority":{"$like":"urg"}}}');
    expect(unknownOperator.code).toBe(1);
    expect(unknownOperator.stderr).toMatch(
      /status 400, code parameter_invalid[\s\S]*filter\.data\.priority\.\$like/,
    );
  });
});
