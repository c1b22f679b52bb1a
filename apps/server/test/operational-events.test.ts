import { verifySignature } from "@deskline/webhook-verifier";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { EVENT_TYPES } from "../src/events/model.js";
import { admin, api, newWorkspace } from "./helpers/api.js";
import { catalogValidators } from "./helpers/catalog.js";
import { type Deployment, type InProcessServer, startDeployment } from "./helpers/delivery.js";
import { type Receiver, startReceiver } from "./helpers/https-receiver.js";
import { eventually } from "./helpers/main-process.js";

// Operational events, end to end, with an API server and two workers on one database (servers in this process): an
// endpoint that fails 15 deliveries warns once (at 5) and is disabled once; one that fails 5 and
// then succeeds recovers; each failed delivery says so; an owner's disable says so. A watching
// endpoint of the same workspace receives them signed like any event (never the endpoint they
// are about), and the catalog's schemas accept every body delivered, of every type.

vi.setConfig({ testTimeout: 180_000 });
const SLOW = 120_000;

type Body = { id: string; type: string; created: number; data: Record<string, any> };

let deployment: Deployment;
let baseUrl: string;
let key: string;
let workspaceId: string;
let watcher: Receiver;
let watcherSecret: string;
const processes: InProcessServer[] = [];

afterAll(() => {
  if (process.env.DEBUG_DELIVERY) for (const m of processes) console.log(m.output().slice(-4000));
});

async function endpoint(url: string, events: string[]): Promise<{ id: string; secret: string }> {
  const created = await api.post("/open/v1/webhook-endpoints", { key, baseUrl, body: { url, events } });
  expect(created.status).toBe(201);
  return created.body;
}

/** Every body the watcher got, parsed, once its signature checked out with the watcher's secret. */
function watched(): Body[] {
  return watcher.received.map((delivery) => {
    const header = delivery.headers["service-signature"] as string;
    verifySignature(delivery.body, header, watcherSecret);
    return JSON.parse(delivery.body.toString("utf8")) as Body;
  });
}

const about = (type: string, endpointId: string) =>
  watched().filter(
    (event) => event.type === type && (event.data.endpoint_id ?? event.data.id) === endpointId,
  );

const created = (path: string, body: object) =>
  api.post(path, { key, baseUrl, body }).then((response) => {
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    return response.body as { id: string };
  });

beforeAll(async () => {
  // One retry, 20 ms after the first attempt: a delivery fails after two attempts.
  deployment = await startDeployment({ WEBHOOK_RETRY_DELAYS: "20ms", WEBHOOK_TIMEOUT_MS: "3000" });
  const apiProcess = await deployment.start("api");
  processes.push(apiProcess);
  baseUrl = await apiProcess.baseUrl;
  processes.push(...(await Promise.all([deployment.start("worker"), deployment.start("worker")])));
  ({ key, workspaceId } = await newWorkspace(undefined, baseUrl));
  watcher = await startReceiver("/watch");
  ({ secret: watcherSecret } = await endpoint(watcher.url, ["*"]));
});

// These two tests share the workspace and its watcher, but each reads only what is about its own
// endpoint, and they write different types (contacts, tickets): sibling concurrent blocks, at once.
describe.concurrent("an endpoint failing 15 deliveries in a row, two workers delivering", () => {
  it("sends one webhook_endpoint.failing (at 5), one webhook_endpoint.disabled, and 15 webhook_delivery.failed, to the other endpoint only", async ({
    expect,
  }) => {
    const failing = await startReceiver("/down");
    failing.answer = () => ({ status: 503 });
    const { id } = await endpoint(failing.url, ["contact.created"]);
    for (let i = 0; i < 15; i++) await created("/open/v1/contacts", { name: `Failing ${i}` });
    await eventually(
      () => api.get(`/open/v1/webhook-endpoints/${id}`, { key, baseUrl }),
      (response) => response.body.status === "disabled",
      "the endpoint disabled",
      SLOW,
    );
    await eventually(
      async () => about("webhook_delivery.failed", id).length,
      (n) => n >= 15,
      "15 webhook_delivery.failed",
      SLOW,
    );
    await eventually(
      async () => about("webhook_endpoint.disabled", id),
      (l) => l.length > 0,
      "disabled",
      SLOW,
    );
    // Let a duplicate arrive, were there one.
    await new Promise((done) => setTimeout(done, 1500));

    const warned = about("webhook_endpoint.failing", id);
    expect(warned).toHaveLength(1);
    expect(warned[0]?.data).toMatchObject({
      object: "webhook_endpoint",
      consecutive_failures: 5,
      disable_after: 15,
    });
    expect(warned[0]?.data).not.toHaveProperty("secret");
    const disabled = about("webhook_endpoint.disabled", id);
    expect(disabled).toHaveLength(1);
    expect(disabled[0]?.data).toMatchObject({
      status: "disabled",
      consecutive_failures: 15,
      reason: "consecutive_failures",
      disabled_reason: "consecutive_failures",
    });
    const failed = about("webhook_delivery.failed", id);
    expect(failed).toHaveLength(15);
    expect(new Set(failed.map((e) => e.data.id)).size).toBe(15);
    for (const event of failed) expect(event.data).toMatchObject({ status: "failed", attempts: 2 });
    // The endpoint they are about got none of them: only its 15 contacts, twice each.
    const sentThere = failing.received.map((r) => r.headers["service-event"]);
    expect(new Set(sentThere)).toEqual(new Set(["contact.created"]));
    expect(sentThere).toHaveLength(30);

    // Events like the others: listed, each delivered once (by id) to the watcher.
    const listed = await api.get("/open/v1/events", {
      key,
      baseUrl,
      query: { type: ["webhook_endpoint.failing", "webhook_endpoint.disabled"], limit: 100 },
    });
    const ids = listed.body.data.map((e: Body) => e.id);
    expect(ids).toEqual(expect.arrayContaining([warned[0]?.id, disabled[0]?.id]));
    for (const event of [...warned, ...disabled, ...failed])
      expect(watcher.deliveriesOf(event.id)).toHaveLength(1);
  });
});

describe.concurrent("an endpoint that fails 5 deliveries, then succeeds", () => {
  it("sends webhook_endpoint.recovered after webhook_endpoint.failing; a disable by its owner says so too", async ({
    expect,
  }) => {
    const flaky = await startReceiver("/flaky");
    let up = false;
    flaky.answer = () => ({ status: up ? 200 : 500 });
    const { id } = await endpoint(flaky.url, ["ticket.created"]);
    for (let i = 0; i < 5; i++) {
      await created("/open/v1/tickets", { subject: `Flaky ${i}` });
      await eventually(
        async () => about("webhook_delivery.failed", id).length,
        (n) => n === i + 1,
        "a failure",
        SLOW,
      );
    }
    await eventually(
      async () => about("webhook_endpoint.failing", id),
      (l) => l.length === 1,
      "failing",
      SLOW,
    );
    expect(about("webhook_endpoint.recovered", id)).toHaveLength(0);
    up = true;
    await created("/open/v1/tickets", { subject: "Flaky, fixed" });
    const [recovered] = await eventually(
      async () => about("webhook_endpoint.recovered", id),
      (l) => l.length === 1,
      "recovered",
      SLOW,
    );
    expect(recovered?.data).toMatchObject({
      id,
      object: "webhook_endpoint",
      status: "enabled",
      consecutive_failures: 0,
    });

    const paused = await api.patch(`/open/v1/webhook-endpoints/${id}`, {
      key,
      baseUrl,
      body: { status: "disabled" },
    });
    expect(paused.status).toBe(200);
    const [byOwner] = await eventually(
      async () => about("webhook_endpoint.disabled", id),
      (l) => l.length === 1,
      "disabled by the owner",
      SLOW,
    );
    expect(byOwner?.data).toMatchObject({
      status: "disabled",
      reason: "owner",
      disabled_reason: "owner",
    });
    expect(flaky.received.map((r) => r.headers["service-event"]).every((t) => t === "ticket.created")).toBe(
      true,
    );

    // Resendable, but never to the endpoint it is about.
    await api.patch(`/open/v1/webhook-endpoints/${id}`, {
      key,
      baseUrl,
      body: { status: "enabled", events: ["*"] },
    });
    const toSubject = await api.post(`/open/v1/events/${recovered?.id}/resend`, {
      key,
      baseUrl,
      body: { endpoint_id: id },
    });
    expect(toSubject.status).toBe(400);
    expect(toSubject.body.error).toMatchObject({ code: "parameter_invalid", param: "endpoint_id" });
    const toAll = await api.post(`/open/v1/events/${recovered?.id}/resend`, { key, baseUrl, body: {} });
    expect(toAll.status).toBe(202);
    expect(toAll.body.data.map((d: { endpoint_id: string }) => d.endpoint_id)).not.toContain(id);
  });
});

// After the two above, alone: it needs the events they cause, and its contact and ticket would
// reach their endpoints.
describe("the catalog", () => {
  it("has schemas that accept every body delivered, of every type", async () => {
    const contact = await created("/open/v1/contacts", { name: "Catalog" });
    await api.patch(`/open/v1/contacts/${contact.id}`, { key, baseUrl, body: { name: "Catalog 2" } });
    const ticket = await created("/open/v1/tickets", { subject: "Catalog" });
    await api.patch(`/open/v1/tickets/${ticket.id}`, { key, baseUrl, body: { status: "Solved" } });
    const conversation = await admin(
      "POST",
      `/admin/v1/workspaces/${workspaceId}/conversations`,
      { contact_id: contact.id, channel: "email", message: { body: "Hello" } },
      baseUrl,
    );
    expect(conversation.status).toBe(201);
    const assigned = await admin(
      "PUT",
      `/admin/v1/conversations/${conversation.body.id}/assignees`,
      { assignee_ids: ["agent_7"] },
      baseUrl,
    );
    expect(assigned.status).toBe(200);
    const erased = await created("/open/v1/contacts", { name: "Catalog erased" });
    expect((await api.post(`/open/v1/contacts/${erased.id}/erase`, { key, baseUrl })).status).toBe(200);
    const seen = await eventually(
      async () => new Set(watched().map((e) => e.type)),
      (types) => types.size === EVENT_TYPES.length,
      "every type at the watcher",
      SLOW,
    );
    expect([...seen].sort()).toEqual([...EVENT_TYPES].sort());
    const validators = await catalogValidators(key, baseUrl);
    for (const event of watched()) {
      const validate = validators.get(event.type);
      expect(validate?.(event), `${event.type}: ${JSON.stringify(validate?.errors)}`).toBe(true);
    }
  });
});
