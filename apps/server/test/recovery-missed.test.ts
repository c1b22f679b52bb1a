import { constructEvent } from "@deskline/webhook-verifier";
import { beforeAll, describe, expect, it, vi } from "vitest";
import type { StoredEvent } from "../src/events/model.js";
import { api, newWorkspace } from "./helpers/api.js";
import { createEndpoint, type Deployment, startDeployment } from "./helpers/delivery.js";
import { type Receiver, startReceiver } from "./helpers/https-receiver.js";
import { eventually } from "./helpers/main-process.js";

// A recovery sends only what the endpoint missed: nothing older than the endpoint or than its
// subscription to the event's type; a preview (`dry_run`) counts by reason what a recovery would
// queue, and a recovery then queues exactly that; without `since` the window starts at the
// endpoint's first failure since it was last healthy. A real server delivering over HTTPS to a
// receiver this file starts, with 50 ms retries.

const SLOW = 120_000;
vi.setConfig({ testTimeout: 240_000 });

type Json = Record<string, any>;
let deployment: Deployment;
let baseUrl: string;
let key: string;
let workspaceId: string;

beforeAll(async () => {
  deployment = await startDeployment({ WEBHOOK_TIMEOUT_MS: "3000" });
  baseUrl = (await deployment.start("all")).baseUrl;
  ({ key, workspaceId } = await newWorkspace(undefined, baseUrl));
});

const recover = (endpointId: string, body?: Json) =>
  api.post(`/open/v1/webhook-endpoints/${endpointId}/recover`, { key, baseUrl, body });
const patch = async (endpointId: string, body: Json) => {
  const patched = await api.patch(`/open/v1/webhook-endpoints/${endpointId}`, { key, baseUrl, body });
  expect(patched.status).toBe(200);
  return patched.body as Json;
};
const deliveries = async (endpointId: string, status?: string) => {
  const query = { limit: 100, ...(status ? { status } : {}) };
  const page = await api.get(`/open/v1/webhook-endpoints/${endpointId}/deliveries`, { key, baseUrl, query });
  expect(page.status).toBe(200);
  return page.body.data as Json[];
};
const settled = (endpointId: string, status: string, count: number) =>
  eventually(
    () => deliveries(endpointId, status),
    (got) => got.length === count,
    `${count} ${status}`,
    SLOW,
  );
const emit = async (type: "contact.created" | "ticket.created", count: number) => {
  const events: StoredEvent[] = [];
  for (let i = 0; i < count; i++) events.push(await deployment.emit(workspaceId, type));
  return events;
};

// One endpoint's history, shared by every test below in order: delivered, failed, paused, then
// subscribed to one more type.
let receiver: Receiver;
let endpoint: { id: string; secret: string };
let failed: StoredEvent[];
let whilePaused: StoredEvent[];
let before: StoredEvent[];
let hourAgo: number;

beforeAll(async () => {
  hourAgo = Math.floor(Date.now() / 1000) - 3600;
  before = await emit("contact.created", 4);
  receiver = await startReceiver();
  endpoint = await createEndpoint({ key, baseUrl }, receiver.url, ["contact.created"]);
  await emit("contact.created", 2);
  await settled(endpoint.id, "succeeded", 2);
  receiver.answer = () => ({ status: 503 });
  failed = await emit("contact.created", 3);
  await settled(endpoint.id, "failed", 3);
  await patch(endpoint.id, { status: "disabled" });
  whilePaused = await emit("contact.created", 2);
  // A type the endpoint did not receive yet, which it subscribes to later: not missed.
  await emit("ticket.created", 1);
  await patch(endpoint.id, { status: "enabled", events: ["contact.created", "ticket.created"] });
});

describe("recovery previews count only what was missed", () => {
  it("a preview from before the endpoint's creation counts by reason, starts at the creation and queues nothing", async () => {
    const { created_at } = await patch(endpoint.id, {});
    const made = (await deliveries(endpoint.id)).length;
    const preview = await recover(endpoint.id, { since: hourAgo, dry_run: true });
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({
      object: "webhook_recovery_preview",
      endpoint_id: endpoint.id,
      since: created_at,
      would_queue: { total: 5, failed: 3, dropped: 0, never_sent: 2 },
      skipped: { succeeded: 2, pending: 0, before_subscription: 1 },
    });
    expect((await deliveries(endpoint.id)).length).toBe(made);
  });

  it("without `since`, the window starts at the first failure since the endpoint was last healthy", async () => {
    const preview = await recover(endpoint.id, { dry_run: true });
    expect(preview.status).toBe(200);
    const since = Date.parse(preview.body.since);
    expect(Math.floor(since / 1000) * 1000).toBe(failed[0]?.created_at.getTime());
    expect(preview.body).toMatchObject({
      would_queue: { total: 5, failed: 3, never_sent: 2 },
      skipped: { pending: 0, before_subscription: 1 },
    });
    // The window reads whole seconds: the delivered events of the first failure's second, if
    // any, are in it, and left alone.
    expect(preview.body.skipped.succeeded).toBeLessThanOrEqual(2);
  });
});

describe("recoveries send only what was missed", () => {
  it("the recovery queues what the preview counted, and only those events reach the receiver", async () => {
    receiver.answer = () => ({ status: 200 });
    const from = receiver.received.length;
    const preview = await recover(endpoint.id, { since: hourAgo, dry_run: true });
    const started = await recover(endpoint.id, { since: hourAgo });
    expect(started.status).toBe(202);
    const done = await eventually(
      async () => (await api.get(`/open/v1/webhook-recoveries/${started.body.id}`, { key, baseUrl })).body,
      (recovery) => recovery.status === "succeeded",
      "the recovery done",
      SLOW,
    );
    expect(done.queued).toBe(preview.body.would_queue.total);
    await settled(endpoint.id, "succeeded", 2 + done.queued);
    const got = receiver.received
      .slice(from)
      .map((d) => constructEvent(d.body, d.headers["service-signature"] as string, endpoint.secret).id);
    expect(got.sort()).toEqual([...failed, ...whilePaused].map((e) => e._id).sort());
    for (const event of before) expect(got).not.toContain(event._id);
  });

  it("once healthy again there is no first failure to start from: `since` is asked for", async () => {
    const refused = await recover(endpoint.id);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: "parameter_missing", param: "since" });
  });
});
