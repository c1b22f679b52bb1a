import { constructEvent } from "@deskline/webhook-verifier";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { summarise } from "../src/webhooks/deliveries/recent.js";
import { keptHeaders, utf8Prefix } from "../src/webhooks/delivery/answer.js";
import { type ApiResponse, api, newWorkspace } from "./helpers/api.js";
import {
  createEndpoint,
  type Deployment,
  type InProcessServer,
  startDeployment,
} from "./helpers/delivery.js";
import { type Answer, type Receiver, startReceiver } from "./helpers/https-receiver.js";
import { eventually } from "./helpers/main-process.js";

// The API the webhook console reads: one delivery's attempts, a recovery's deliveries and their
// counts. A real server (in this process) delivering over real HTTPS to receivers this file
// starts, with 50 ms retries; every answer is checked against the spec by the api helper.

vi.setConfig({ testTimeout: 120_000 });

type Json = Record<string, any>;

let deployment: Deployment;
let main: InProcessServer;
let baseUrl: string;

beforeAll(async () => {
  deployment = await startDeployment({ WEBHOOK_TIMEOUT_MS: "3000" });
  main = await deployment.start("all");
  baseUrl = main.baseUrl;
});
afterAll(() => {
  if (process.env.DEBUG_DELIVERY) console.log(main.output().slice(-5000));
});

/** One test's own workspace and receiver on the shared server, and the calls made with its key. */
interface World {
  key: string;
  workspaceId: string;
  receiver: Receiver;
  at: () => { key: string; baseUrl: string };
  get: (path: string, query?: Record<string, string>) => Promise<ApiResponse>;
  /** The endpoint's deliveries (first page), once `done` holds for them. */
  deliveriesWhen: (
    endpointId: string,
    query: Record<string, string>,
    done: (list: Json[]) => boolean,
  ) => Promise<Json[]>;
}

async function newWorld(): Promise<World> {
  const { key, workspaceId } = await newWorkspace(undefined, baseUrl);
  const receiver = await startReceiver();
  const at = () => ({ key, baseUrl });
  const get = (path: string, query?: Record<string, string>) =>
    api.get(path, { ...at(), ...(query && { query }) });
  const deliveriesWhen = (
    endpointId: string,
    query: Record<string, string>,
    done: (list: Json[]) => boolean,
  ) =>
    eventually(
      async () => {
        const page = await get(`/open/v1/webhook-endpoints/${endpointId}/deliveries`, query);
        expect(page.status).toBe(200);
        return page.body.data as Json[];
      },
      done,
      `deliveries of ${endpointId} ${JSON.stringify(query)}`,
    );
  return { key, workspaceId, receiver, at, get, deliveriesWhen };
}

// The tests share the server only (a workspace, a key and a receiver each, from `newWorld`) and
// mostly wait on deliveries: they run at once, within each block and across these sibling blocks.
describe.concurrent("the attempts of one delivery", () => {
  it("`delivery_id` lists that delivery's attempts only, newest first", async ({ expect }) => {
    const { receiver, at, workspaceId, get, deliveriesWhen } = await newWorld();
    // The first event's delivery fails once, then succeeds; the second succeeds at once.
    receiver.answer = (_, index) => ({ status: index === 0 ? 503 : 200 });
    const endpoint = await createEndpoint(at(), receiver.url);
    const first = await deployment.emit(workspaceId, "contact.created");
    await deliveriesWhen(endpoint.id, { status: "succeeded" }, (list) => list.length === 1);
    const second = await deployment.emit(workspaceId, "contact.updated");
    const settled = await deliveriesWhen(endpoint.id, { status: "succeeded" }, (list) => list.length === 2);
    const deliveryOf = (eventId: string) => settled.find((d) => d.event_id === eventId) as Json;

    const path = `/open/v1/webhook-endpoints/${endpoint.id}/attempts`;
    const ofFirst = await get(path, { delivery_id: deliveryOf(first._id).id });
    expect(ofFirst.status).toBe(200);
    expect(ofFirst.body.data.map((a: Json) => [a.delivery_id, a.attempt, a.status_code])).toEqual([
      [deliveryOf(first._id).id, 2, 200],
      [deliveryOf(first._id).id, 1, 503],
    ]);
    const ofSecond = await get(path, { delivery_id: deliveryOf(second._id).id });
    expect(ofSecond.body.data.map((a: Json) => a.attempt)).toEqual([1]);
    // All three without the filter; pages of one delivery's attempts go on as any page does.
    expect((await get(path)).body.data).toHaveLength(3);
    const firstPage = await get(path, { delivery_id: deliveryOf(first._id).id, limit: "1" });
    expect(firstPage.body).toMatchObject({ has_more: true, data: [{ attempt: 2 }] });
    const next = await get(path, {
      delivery_id: deliveryOf(first._id).id,
      limit: "1",
      starting_after: firstPage.body.data[0].id,
    });
    expect(next.body).toMatchObject({ has_more: false, data: [{ attempt: 1 }] });
  });

  it("a delivery of another endpoint, or none, lists nothing; a malformed id is refused naming it", async ({
    expect,
  }) => {
    const { receiver, at, workspaceId, get, deliveriesWhen } = await newWorld();
    const endpoint = await createEndpoint(at(), receiver.url);
    const other = await createEndpoint(at(), "https://other.invalid/h", ["ticket.created"]);
    await deployment.emit(workspaceId, "contact.created");
    const [delivery] = await deliveriesWhen(
      endpoint.id,
      { status: "succeeded" },
      (list) => list.length === 1,
    );
    const ofOther = await get(`/open/v1/webhook-endpoints/${other.id}/attempts`, {
      delivery_id: delivery?.id,
    });
    expect(ofOther.body.data).toEqual([]);
    const none = await get(`/open/v1/webhook-endpoints/${endpoint.id}/attempts`, {
      delivery_id: "dlv_nothere",
    });
    expect(none.body.data).toEqual([]);
    for (const bad of ["evt_abc", "dlv_a.b", "dlv_"]) {
      const refused = await get(`/open/v1/webhook-endpoints/${endpoint.id}/attempts`, { delivery_id: bad });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: "parameter_invalid", param: "delivery_id" });
    }
  });
});

describe.concurrent("a recovery's deliveries", () => {
  it("each delivery names its recovery; the list filters by it; the recovery counts them by status now", async ({
    expect,
  }) => {
    const { receiver, at, workspaceId, get, deliveriesWhen } = await newWorld();
    const endpoint = await createEndpoint(at(), receiver.url);
    const before = await deployment.emit(workspaceId, "contact.created");
    await deliveriesWhen(endpoint.id, { status: "succeeded" }, (list) => list.length === 1);
    const patch = (status: string) =>
      api.patch(`/open/v1/webhook-endpoints/${endpoint.id}`, { ...at(), body: { status } });
    expect((await patch("disabled")).status).toBe(200);
    const missed = [
      await deployment.emit(workspaceId, "contact.created"),
      await deployment.emit(workspaceId, "ticket.created"),
    ];
    expect((await patch("enabled")).status).toBe(200);
    // The receiver holds the recovery's deliveries until the test has seen them pending.
    receiver.answer = () => "hang";

    const since = Math.floor(before.created_at.getTime() / 1000) - 60;
    const recover = (body: Json) =>
      api.post(`/open/v1/webhook-endpoints/${endpoint.id}/recover`, { ...at(), body: { since, ...body } });
    // The window ends at the server's now, the database's time as the server reads it, and the
    // events bear this process's: a preview first, until the window holds both.
    await eventually(
      async () => (await recover({ dry_run: true })).body as Json,
      (preview) => preview.would_queue?.total === 2,
      "a window that holds both missed events",
    );
    const started = await recover({});
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const recoveryId = started.body.id as string;
    const recovery = () => get(`/open/v1/webhook-recoveries/${recoveryId}`);
    const queued = await eventually(
      async () => (await recovery()).body as Json,
      (r) => r.status === "succeeded" && r.deliveries.pending === 2,
      "the recovery queued both missed events",
    );
    expect(queued).toMatchObject({
      queued: 2,
      deliveries: { pending: 2, succeeded: 0, failed: 0, dropped: 0 },
    });

    const listed = await get(`/open/v1/webhook-endpoints/${endpoint.id}/deliveries`, {
      recovery_id: recoveryId,
    });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((d: Json) => [d.event_id, d.recovery_id]).sort()).toEqual(
      missed.map((e) => [e._id, recoveryId]).sort(),
    );
    // The delivery the event itself made names no recovery.
    const all = await get(`/open/v1/webhook-endpoints/${endpoint.id}/deliveries`);
    expect(all.body.data.find((d: Json) => d.event_id === before._id)).toMatchObject({ recovery_id: null });

    receiver.answer = () => ({ status: 200 });
    receiver.release();
    const done = await eventually(
      async () => (await recovery()).body as Json,
      (r) => r.deliveries.succeeded === 2,
      "the recovery's deliveries succeeded",
    );
    expect(done.deliveries).toEqual({ succeeded: 2, failed: 0, pending: 0, dropped: 0 });
  });

  it("a recovery of another workspace filters to nothing; a malformed id is refused naming it", async ({
    expect,
  }) => {
    const { receiver, at, get } = await newWorld();
    const endpoint = await createEndpoint(at(), receiver.url);
    const path = `/open/v1/webhook-endpoints/${endpoint.id}/deliveries`;
    expect((await get(path, { recovery_id: "rcv_nothere" })).body.data).toEqual([]);
    const refused = await get(path, { recovery_id: "dlv_abc" });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: "parameter_invalid", param: "recovery_id" });
  });
});

describe.concurrent("the endpoint list's recent deliveries", () => {
  it("summarises the newest deliveries: pending and dropped counted but not rated, the latest attempt of any", ({
    expect,
  }) => {
    const t = (minute: number) => new Date(Date.UTC(2026, 2, 9, 8, minute));
    expect(summarise([])).toEqual({
      counted: 0,
      succeeded: 0,
      failed: 0,
      success_rate: null,
      last_attempt_at: null,
    });
    expect(
      summarise([
        { status: "pending", last_attempt_at: null },
        { status: "succeeded", last_attempt_at: t(5) },
        // An older delivery retried last: its attempt is the latest.
        { status: "failed", last_attempt_at: t(9) },
        { status: "succeeded", last_attempt_at: t(1) },
        { status: "dropped", last_attempt_at: null },
      ]),
    ).toEqual({
      counted: 5,
      succeeded: 2,
      failed: 1,
      success_rate: 2 / 3,
      last_attempt_at: t(9).toISOString(),
    });
  });

  it("lists each endpoint with its success rate and last attempt, from the one list request", async ({
    expect,
  }) => {
    const { receiver, at, workspaceId, get, deliveriesWhen } = await newWorld();
    const failing = await startReceiver();
    failing.answer = () => ({ status: 500 });
    const good = await createEndpoint(at(), receiver.url, ["contact.created"]);
    const bad = await createEndpoint(at(), failing.url, ["contact.created"]);
    const idle = await createEndpoint(at(), "https://idle.invalid/h", ["ticket.created"]);
    await deployment.emit(workspaceId, "contact.created");
    await deployment.emit(workspaceId, "contact.created");
    await deliveriesWhen(good.id, { status: "succeeded" }, (list) => list.length === 2);
    await deliveriesWhen(bad.id, { status: "failed" }, (list) => list.length === 2);

    const listed = await get("/open/v1/webhook-endpoints");
    expect(listed.status).toBe(200);
    const recent = (id: string) => listed.body.data.find((e: Json) => e.id === id).recent_deliveries;
    expect(recent(good.id)).toMatchObject({ counted: 2, succeeded: 2, failed: 0, success_rate: 1 });
    expect(recent(bad.id)).toMatchObject({ counted: 2, succeeded: 0, failed: 2, success_rate: 0 });
    expect(recent(idle.id)).toEqual({
      counted: 0,
      succeeded: 0,
      failed: 0,
      success_rate: null,
      last_attempt_at: null,
    });
    // The last attempt is the latest one the attempts log has.
    const [latest] = (await get(`/open/v1/webhook-endpoints/${bad.id}/attempts`, { limit: "1" })).body.data;
    expect(recent(bad.id).last_attempt_at).toBe(latest.created_at);
    // Paging keeps it: a page of one carries it too.
    const one = await get("/open/v1/webhook-endpoints", { limit: "1" });
    expect(one.body.data[0].recent_deliveries).toEqual(recent(one.body.data[0].id));
  });
});

describe.concurrent("the receiver's answer, cut to size", () => {
  it("cuts a body to 1 KiB on a character's boundary, and keeps a few headers only", ({ expect }) => {
    const twoByte = Buffer.from(`a${"é".repeat(600)}`); // 1201 bytes: byte 1024 is inside an é
    expect(utf8Prefix(twoByte)).toBe(`a${"é".repeat(511)}`);
    const fourByte = Buffer.from(`ab${"😀".repeat(300)}`); // byte 1024 is the 3rd of a 4-byte emoji
    expect(utf8Prefix(fourByte)).toBe(`ab${"😀".repeat(255)}`);
    expect(utf8Prefix(Buffer.from([0x61, 0xff, 0x62]))).toBe("a\uFFFDb");
    expect(
      keptHeaders({
        "content-type": "text/html",
        "set-cookie": ["a=1"],
        "retry-after": "x".repeat(300),
        server: "nginx",
      }),
    ).toEqual({ "content-type": "text/html", "retry-after": "x".repeat(256) });
  });
});

describe.concurrent("the receiver's answer stored on each attempt", () => {
  const attemptsOf = async (get: World["get"], endpointId: string, count: number) =>
    eventually(
      async () => (await get(`/open/v1/webhook-endpoints/${endpointId}/attempts`)).body.data as Json[],
      (list) => list.length >= count && list.every((a) => a.status_code !== null || a.error),
      `${count} attempts of ${endpointId}`,
    );

  it("stores the status, content-type and body start with the attempt, returned as a JSON string", async ({
    expect,
  }) => {
    const { key, receiver, at, workspaceId, get } = await newWorld();
    const markup = `<script>alert("x")</script><img src=x onerror=alert(1)>`;
    receiver.answer = (_, index): Answer =>
      index === 0
        ? {
            status: 503,
            headers: { "content-type": "text/html; charset=utf-8", "x-other": "no" },
            body: markup,
          }
        : { status: 200, headers: { "content-type": "text/plain" }, body: `a${"é".repeat(3000)}` };
    const endpoint = await createEndpoint(at(), receiver.url);
    await deployment.emit(workspaceId, "contact.created");
    const [ok, failed] = await attemptsOf(get, endpoint.id, 2);
    expect(failed).toMatchObject({
      status_code: 503,
      response: {
        // Those kept only: not the receiver's `x-other` (a chunked answer has no content-length).
        headers: { "content-type": "text/html; charset=utf-8" },
        body: markup,
        body_truncated: false,
      },
    });
    expect(ok).toMatchObject({
      status_code: 200,
      response: {
        headers: { "content-type": "text/plain" },
        body: `a${"é".repeat(511)}`,
        body_truncated: true,
      },
    });
    // The API answers JSON: the receiver's markup is a string in it, never a page.
    const raw = await fetch(new URL(`/open/v1/webhook-endpoints/${endpoint.id}/attempts`, baseUrl), {
      headers: { Authorization: `Bearer ${key}` },
    });
    expect(raw.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await raw.text()).toContain(JSON.stringify(markup));
  });

  it("keeps the first KiB of a 16 MiB body, flagged as cut", async ({ expect }) => {
    const { receiver, at, workspaceId, get } = await newWorld();
    const huge = Buffer.alloc(16 * 1024 * 1024, "z");
    receiver.answer = () => ({ status: 200, headers: { "content-type": "text/plain" }, body: huge });
    const endpoint = await createEndpoint(at(), receiver.url);
    await deployment.emit(workspaceId, "contact.created");
    const [attempt] = await attemptsOf(get, endpoint.id, 1);
    expect(attempt?.response).toEqual({
      headers: { "content-type": "text/plain" },
      body: "z".repeat(1024),
      body_truncated: true,
    });
  });

  it("a receiver that never answers leaves no response on the attempt", async ({ expect }) => {
    const { receiver, at, workspaceId, get } = await newWorld();
    receiver.answer = () => "hang";
    const endpoint = await createEndpoint(at(), "https://no-such-host.invalid/h");
    await deployment.emit(workspaceId, "contact.created");
    const [attempt] = await attemptsOf(get, endpoint.id, 1);
    expect(attempt).toMatchObject({ status_code: null, response: null });
  });
});

const sendTest = (at: World["at"], endpointId: string, body: unknown) =>
  api.post(`/open/v1/webhook-endpoints/${endpointId}/test`, { ...at(), body });

describe.concurrent("a test event, sent", () => {
  it("sends the catalog's example of the type to that endpoint only, signed, marked as a test", async ({
    expect,
  }) => {
    const { receiver, at, get, deliveriesWhen } = await newWorld();
    const target = await createEndpoint(at(), receiver.url, ["contact.created"]);
    const bystander = await startReceiver();
    const other = await createEndpoint(at(), bystander.url, ["*"]);
    const sent = await sendTest(at, target.id, { event_type: "ticket.updated" });
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({
      object: "webhook_delivery",
      endpoint_id: target.id,
      event_type: "ticket.updated",
      status: "pending",
      recovery_id: null,
    });
    const [arrived] = await eventually(
      async () => receiver.deliveriesOf(sent.body.event_id),
      (list) => list.length === 1,
      "the test event at its endpoint",
    );
    const event = constructEvent(
      arrived?.body as Buffer,
      arrived?.headers["service-signature"] as string,
      target.secret,
    ) as Json;
    const types = await get("/open/v1/event-types");
    expect(types.status).toBe(200);
    expect(event).toMatchObject({ id: sent.body.event_id, type: "ticket.updated", test: true });
    expect(event.data).toMatchObject({ object: "ticket" });
    expect(event).toHaveProperty("previous_attributes");
    // Through the normal path: its delivery settles and its attempt is logged.
    await deliveriesWhen(target.id, { status: "succeeded" }, (list) => list[0]?.id === sent.body.id);
    // To that endpoint only, also when resent to all: the subscribed bystander never gets it.
    const resent = await api.post(`/open/v1/events/${sent.body.event_id}/resend`, { ...at(), body: {} });
    expect(resent.status).toBe(202);
    expect(resent.body.data.map((d: Json) => d.endpoint_id)).toEqual([target.id]);
    await deliveriesWhen(target.id, { status: "succeeded" }, (list) => list.length === 2);
    expect(bystander.deliveriesOf(sent.body.event_id)).toEqual([]);
    expect((await get(`/open/v1/webhook-endpoints/${other.id}/deliveries`)).body.data).toEqual([]);
    // Listed as an event, marked.
    expect((await get(`/open/v1/events/${sent.body.event_id}`)).body).toMatchObject({ test: true });
  });
});

describe.concurrent("a test event: recoveries pass it over, and refusals", () => {
  it("no recovery of another endpoint queues it", async ({ expect }) => {
    const { receiver, at, get } = await newWorld();
    const target = await createEndpoint(at(), receiver.url);
    const other = await createEndpoint(at(), "https://other-recovered.invalid/h");
    const sent = await sendTest(at, target.id, { event_type: "contact.created" });
    expect(sent.status).toBe(202);
    const since = Math.floor(Date.now() / 1000) - 60;
    const started = await api.post(`/open/v1/webhook-endpoints/${other.id}/recover`, {
      ...at(),
      body: { since },
    });
    expect(started.status).toBe(202);
    const done = await eventually(
      async () => (await get(`/open/v1/webhook-recoveries/${started.body.id}`)).body as Json,
      (r) => r.status === "succeeded",
      "the recovery finished",
    );
    expect(done.queued).toBe(0);
  });

  it("refuses an unknown type, a missing one, a disabled endpoint and another workspace's, queueing nothing", async ({
    expect,
  }) => {
    const { receiver, at, get } = await newWorld();
    const endpoint = await createEndpoint(at(), receiver.url);
    for (const body of [{ event_type: "contact.exploded" }, { event_type: 7 }]) {
      const refused = await sendTest(at, endpoint.id, body);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: "parameter_invalid", param: "event_type" });
    }
    const missing = await sendTest(at, endpoint.id, {});
    expect(missing.body.error).toMatchObject({ code: "parameter_missing", param: "event_type" });
    const extra = await sendTest(at, endpoint.id, { event_type: "contact.created", endpoint_id: "we_x" });
    expect(extra.body.error).toMatchObject({ code: "parameter_unknown" });
    expect(
      (
        await api.patch(`/open/v1/webhook-endpoints/${endpoint.id}`, {
          ...at(),
          body: { status: "disabled" },
        })
      ).status,
    ).toBe(200);
    const disabled = await sendTest(at, endpoint.id, { event_type: "contact.created" });
    expect(disabled.status).toBe(409);
    expect(disabled.body.error).toMatchObject({ code: "webhook_endpoint_disabled", param: "id" });
    const theirs = await newWorkspace(undefined, baseUrl);
    const foreign = await api.post(`/open/v1/webhook-endpoints/${endpoint.id}/test`, {
      key: theirs.key,
      baseUrl,
      body: { event_type: "contact.created" },
    });
    expect(foreign.status).toBe(404);
    expect((await get(`/open/v1/webhook-endpoints/${endpoint.id}/deliveries`)).body.data).toEqual([]);
    // No test event was recorded (disabling it recorded its `webhook_endpoint.disabled`).
    expect((await get("/open/v1/events")).body.data.filter((e: Json) => e.test)).toEqual([]);
  });
});

const resend = (at: World["at"], ids: unknown) =>
  api.post("/open/v1/webhook-deliveries/resend", { ...at(), body: { ids } });

describe.concurrent("a bulk resend", () => {
  it("queues each chosen delivery again to its endpoint, one result per id in input order", async ({
    expect,
  }) => {
    const { receiver, at, workspaceId, deliveriesWhen } = await newWorld();
    const one = await createEndpoint(at(), receiver.url, ["contact.created"]);
    const second = await startReceiver();
    const two = await createEndpoint(at(), second.url, ["contact.created"]);
    const off = await createEndpoint(at(), "https://off.invalid/h", ["ticket.created"]);
    const event = await deployment.emit(workspaceId, "contact.created");
    const [ofOne] = await deliveriesWhen(one.id, { status: "succeeded" }, (list) => list.length === 1);
    const [ofTwo] = await deliveriesWhen(two.id, { status: "succeeded" }, (list) => list.length === 1);
    // A delivery of a disabled endpoint (it was dropped or failed before the owner paused it).
    await deployment.emit(workspaceId, "ticket.created");
    const [ofOff] = await deliveriesWhen(off.id, {}, (list) => list.length === 1);
    await api.patch(`/open/v1/webhook-endpoints/${off.id}`, { ...at(), body: { status: "disabled" } });
    const theirs = await newWorkspace(undefined, baseUrl);
    const theirEndpoint = await createEndpoint({ key: theirs.key, baseUrl }, "https://t.invalid/h");
    await deployment.emit(theirs.workspaceId, "contact.created");
    const [foreign] = await eventually(
      async () =>
        (
          await api.get(`/open/v1/webhook-endpoints/${theirEndpoint.id}/deliveries`, {
            key: theirs.key,
            baseUrl,
          })
        ).body.data as Json[],
      (list) => list.length === 1,
      "the other workspace's delivery",
    );

    const ids = [ofOne?.id, "dlv_missing", ofTwo?.id, ofOff?.id, foreign?.id];
    const answer = await resend(at, ids);
    expect(answer.status).toBe(200);
    expect(answer.body.object).toBe("webhook_delivery_resend");
    expect(answer.body.data.map((r: Json) => [r.index, r.id, r.status, r.error?.code ?? null])).toEqual([
      [0, ofOne?.id, "queued", null],
      [1, "dlv_missing", "error", "resource_missing"],
      [2, ofTwo?.id, "queued", null],
      [3, ofOff?.id, "error", "webhook_endpoint_disabled"],
      [4, foreign?.id, "error", "resource_missing"],
    ]);
    expect(answer.body.data[0].delivery).toMatchObject({
      endpoint_id: one.id,
      event_id: event._id,
      status: "pending",
    });
    // Each endpoint gets the event again, the same id; the other endpoint's is not sent to the first.
    await eventually(
      async () => [receiver.deliveriesOf(event._id).length, second.deliveriesOf(event._id).length],
      ([a, b]) => a === 2 && b === 2,
      "the event again at both endpoints",
    );
    // Two ids of one event and endpoint, once the first resend settled: queued once, not twice.
    await deliveriesWhen(one.id, { status: "succeeded" }, (list) => list.length === 2);
    const twice = await resend(at, [ofOne?.id, answer.body.data[0].delivery.id]);
    expect(twice.body.data.map((r: Json) => r.status)).toEqual(["queued", "already_pending"]);
    expect(twice.body.data[1].delivery).toBeNull();
  });
});

describe.concurrent("a bulk resend, refused", () => {
  it("refuses more than 100 ids naming `ids`, a repeated or malformed id, and an empty list; queueing nothing", async ({
    expect,
  }) => {
    const { receiver, at, workspaceId, get, deliveriesWhen } = await newWorld();
    const endpoint = await createEndpoint(at(), receiver.url, ["contact.created"]);
    await deployment.emit(workspaceId, "contact.created");
    const [delivery] = await deliveriesWhen(
      endpoint.id,
      { status: "succeeded" },
      (list) => list.length === 1,
    );
    const tooMany = Array.from({ length: 101 }, (_, i) => (i === 0 ? delivery?.id : `dlv_x${i}`));
    for (const ids of [tooMany, [delivery?.id, delivery?.id], ["evt_abc"], [], "dlv_x"]) {
      const refused = await resend(at, ids);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: "parameter_invalid" });
      expect(refused.body.error.param).toMatch(/^ids/);
    }
    expect((await resend(at, tooMany)).body.error.message).toMatch(/100/);
    expect((await get(`/open/v1/webhook-endpoints/${endpoint.id}/deliveries`)).body.data).toHaveLength(1);
  });
});

describe.concurrent("the deliveries of several events", () => {
  const ofEvents = (at: World["at"], eventIds: string[], query: Record<string, string> = {}, as = at()) =>
    api.get("/open/v1/webhook-deliveries", { ...as, query: { ...query, event_id: eventIds } });

  it("lists the deliveries of every event named, newest first, page by page, none of another workspace", async ({
    expect,
  }) => {
    const { receiver, at, workspaceId, deliveriesWhen } = await newWorld();
    const one = await createEndpoint(at(), receiver.url, ["contact.created"]);
    const second = await startReceiver();
    const two = await createEndpoint(at(), second.url, ["contact.created", "ticket.created"]);
    const first = await deployment.emit(workspaceId, "contact.created");
    const ticket = await deployment.emit(workspaceId, "ticket.created");
    const unasked = await deployment.emit(workspaceId, "contact.created");
    await deliveriesWhen(one.id, { status: "succeeded" }, (list) => list.length === 2);
    await deliveriesWhen(two.id, { status: "succeeded" }, (list) => list.length === 3);
    const theirs = await newWorkspace(undefined, baseUrl);
    const theirEvent = await deployment.emit(theirs.workspaceId, "contact.created");

    const page = await ofEvents(at, [first._id, ticket._id, theirEvent._id]);
    expect(page.status).toBe(200);
    const listed = page.body.data as Json[];
    // Three deliveries: the contact's to both endpoints, the ticket's to the second; none of the
    // event not asked for, nor of the other workspace's.
    expect(listed.map((d) => `${d.event_id} ${d.endpoint_id}`).sort()).toEqual(
      [`${first._id} ${one.id}`, `${first._id} ${two.id}`, `${ticket._id} ${two.id}`].sort(),
    );
    expect(listed.map((d) => d.id)).toEqual(
      listed
        .map((d) => d.id)
        .sort()
        .reverse(),
    );
    expect(listed.some((d) => d.event_id === unasked._id)).toBe(false);
    // One id alone (the query's `event_id=…` once) and pages of one go on as any list's do.
    expect((await ofEvents(at, [ticket._id])).body.data.map((d: Json) => d.endpoint_id)).toEqual([two.id]);
    const walked: string[] = [];
    let after: string | undefined;
    do {
      const next = await ofEvents(at, [first._id, ticket._id], {
        limit: "1",
        ...(after && { starting_after: after }),
      });
      walked.push(...next.body.data.map((d: Json) => d.id));
      after = next.body.has_more ? next.body.data[0].id : undefined;
    } while (after);
    expect(walked).toEqual(listed.map((d) => d.id));
    // Another workspace naming our event gets none of its deliveries.
    const foreign = await ofEvents(at, [first._id], {}, { key: theirs.key, baseUrl });
    expect(foreign.status).toBe(200);
    expect(foreign.body.data).toEqual([]);
  });

  it("refuses no `event_id`, more than 100 and a malformed one, naming `event_id`", async ({ expect }) => {
    const { at } = await newWorld();
    const missing = await api.get("/open/v1/webhook-deliveries", at());
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: "parameter_missing", param: "event_id" });
    const hundred = Array.from({ length: 100 }, (_, i) => `evt_x${i}`);
    expect((await ofEvents(at, hundred)).status).toBe(200);
    for (const ids of [[...hundred, "evt_x100"], ["dlv_abc"]]) {
      const refused = await ofEvents(at, ids);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: "parameter_invalid" });
      expect(refused.body.error.param).toMatch(/^event_id/);
    }
    expect((await ofEvents(at, [...hundred, "evt_x100"])).body.error.message).toMatch(/100/);
  });
});
