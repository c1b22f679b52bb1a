import { beforeAll, describe, expect, it } from "vitest";
import { countByHour, windowOf } from "../src/webhooks/deliveries/stats.js";
import {
  type DeliveryStatus,
  pendingKey,
  type WebhookDeliveryDoc,
} from "../src/webhooks/deliveries/store.js";
import { api, newWorkspace } from "./helpers/api.js";
import { runDatabase } from "./helpers/database.js";

// getWebhookEndpointStats: the window and the counting as pure rules (a table), then the
// operation over HTTP on deliveries recorded in the run's database.

const at = (iso: string) => new Date(iso);

describe("the window: 24 clock hours, the last the current one", () => {
  it.each([
    ["2026-03-09T08:30:00.000Z", "2026-03-08T09:00:00.000Z", "2026-03-09T09:00:00.000Z"],
    ["2026-03-09T08:00:00.000Z", "2026-03-08T09:00:00.000Z", "2026-03-09T09:00:00.000Z"],
    ["2026-03-09T08:59:59.999Z", "2026-03-08T09:00:00.000Z", "2026-03-09T09:00:00.000Z"],
    ["2026-03-09T23:10:00.000Z", "2026-03-09T00:00:00.000Z", "2026-03-10T00:00:00.000Z"],
  ])("at %s: %s to %s", (now, since, until) => {
    const window = windowOf(at(now));
    expect([window.since.toISOString(), window.until.toISOString()]).toEqual([since, until]);
  });
});

describe("counting by hour", () => {
  const since = at("2026-03-08T09:00:00.000Z");
  const delivery = (iso: string, status: DeliveryStatus) => ({ created_at: at(iso), status });

  it("puts each delivery in its hour, ignores those outside the window, and totals them", () => {
    const { totals, hourly } = countByHour(
      [
        delivery("2026-03-08T09:00:00.000Z", "succeeded"), // the first instant of the first hour
        delivery("2026-03-08T09:59:59.999Z", "failed"),
        delivery("2026-03-08T10:00:00.000Z", "pending"),
        delivery("2026-03-09T08:59:59.999Z", "dropped"), // the last instant of the last hour
        delivery("2026-03-08T08:59:59.999Z", "succeeded"), // before the window
        delivery("2026-03-09T09:00:00.000Z", "succeeded"), // after it
      ],
      since,
    );
    expect(totals).toEqual({ succeeded: 1, failed: 1, pending: 1, dropped: 1 });
    expect(hourly).toHaveLength(24);
    expect(hourly[0]).toEqual({
      start: "2026-03-08T09:00:00.000Z",
      succeeded: 1,
      failed: 1,
      pending: 0,
      dropped: 0,
    });
    expect(hourly[1]).toMatchObject({ start: "2026-03-08T10:00:00.000Z", pending: 1 });
    expect(hourly[23]).toMatchObject({ start: "2026-03-09T08:00:00.000Z", dropped: 1 });
  });
});

describe("GET /open/v1/webhook-endpoints/{id}/stats", () => {
  const database = runDatabase();
  let key: string;
  let workspaceId: string;
  beforeAll(async () => {
    ({ key, workspaceId } = await newWorkspace());
  });

  it("counts the endpoint's deliveries of the window by status and hour, and no one else's", async () => {
    const endpoint = await api.post("/open/v1/webhook-endpoints", {
      key,
      body: { url: "https://stats.invalid/h" },
    });
    const other = await api.post("/open/v1/webhook-endpoints", {
      key,
      body: { url: "https://other.invalid/h" },
    });
    const now = Date.now();
    const ago = (hours: number) => new Date(now - hours * 3_600_000);
    const doc = (
      endpointId: string,
      status: DeliveryStatus,
      created_at: Date,
      n: number,
    ): WebhookDeliveryDoc => ({
      _id: `dlv_stats${endpointId.slice(-6)}${n}`,
      pending_key:
        status === "pending"
          ? pendingKey(endpointId, `evt_stats${n}`)
          : `settled dlv_stats${endpointId.slice(-6)}${n}`,
      workspace_id: workspaceId,
      event_id: `evt_stats${n}`,
      event_type: "contact.created",
      endpoint_id: endpointId,
      status,
      attempts: 1,
      last_attempt_at: created_at,
      last_status_code: status === "succeeded" ? 200 : 500,
      next_attempt_at: null,
      created_at,
      updated_at: created_at,
      origin: "event",
      due_at: null,
      lease_holder: null,
    });
    const db = await database();
    await db.collection<WebhookDeliveryDoc>("webhook_deliveries").insertMany([
      doc(endpoint.body.id, "succeeded", ago(0), 1),
      doc(endpoint.body.id, "succeeded", ago(0), 2),
      doc(endpoint.body.id, "failed", ago(0), 3),
      doc(endpoint.body.id, "failed", ago(5), 4),
      doc(endpoint.body.id, "succeeded", ago(30), 5), // before the window
      doc(other.body.id, "failed", ago(0), 6),
    ]);

    const stats = await api.get(`/open/v1/webhook-endpoints/${endpoint.body.id}/stats`, { key });
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ object: "webhook_endpoint_stats", endpoint_id: endpoint.body.id });
    expect(stats.body.totals).toEqual({ succeeded: 2, failed: 2, pending: 0, dropped: 0 });
    expect(stats.body.hourly[23]).toMatchObject({ succeeded: 2, failed: 1 });
    expect(stats.body.hourly[18]).toMatchObject({ succeeded: 0, failed: 1 });
    expect(Date.parse(stats.body.until)).toBeGreaterThan(now);
  });

  it("answers 404 for an endpoint of another workspace, as for none", async () => {
    const other = await newWorkspace();
    const theirs = await api.post("/open/v1/webhook-endpoints", {
      key: other.key,
      body: { url: "https://x.invalid/h" },
    });
    const answer = await api.get(`/open/v1/webhook-endpoints/${theirs.body.id}/stats`, { key });
    expect(answer.status).toBe(404);
    expect(answer.body.error.code).toBe("resource_missing");
  });
});
