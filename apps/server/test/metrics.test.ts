import { MongoClient } from "mongodb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { newEvent, type StoredEvent } from "../src/events/model.js";
import { createMetrics } from "../src/metrics-wire.js";
import { createLogger } from "../src/platform/logger.js";
import { Metrics } from "../src/platform/metrics/metrics.js";
import { createStore } from "../src/store.js";
import { api, newWorkspace, request } from "./helpers/api.js";
import { parseExposition } from "./helpers/exposition.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

// A server of its own, on a database of its own: the gauges count deployment-wide (disabled
// endpoints, pending jobs), so no other test file may add to them. A tight rate limit on a clock
// that never moves makes 429s on demand; METRICS_TOKEN protects the scrape.
const METRICS_TOKEN = "test-metrics-token";
const databaseName = `deskline_metrics_${process.pid}`;
let server: TestServer;
let client: MongoClient;
beforeAll(async () => {
  server = await startTestServer({
    mongodbUri: inject("mongodbUri"),
    databaseName,
    config: { metricsToken: METRICS_TOKEN, rateLimitPerSecond: 1, rateLimitBurst: 3 },
    clock: () => 0,
  });
  client = await new MongoClient(inject("mongodbUri")).connect();
});
afterAll(async () => {
  await client.db(databaseName).dropDatabase();
  await client.close();
  await server.stop();
});

/** One scrape, parsed into `name{labels}` → value. */
async function scrape(): Promise<Map<string, number>> {
  const response = await request("GET", "/metrics", {
    baseUrl: server.baseUrl,
    headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
  });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(response.body as string);
}

const value = (samples: Map<string, number>, sample: string) => samples.get(sample) ?? 0;

describe("GET /metrics: who may scrape", () => {
  it("answers 401 without METRICS_TOKEN or with a wrong one", async () => {
    const missing = await request("GET", "/metrics", { baseUrl: server.baseUrl });
    expect(missing.status).toBe(401);
    expect(missing.body.error.code).toBe("missing_api_key");
    expect(missing.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const wrong = await request("GET", "/metrics", {
      baseUrl: server.baseUrl,
      headers: { Authorization: `Bearer ${METRICS_TOKEN}x` },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe("invalid_api_key");
  });

  it("is open when METRICS_TOKEN is unset (the run's shared server)", async () => {
    const response = await request("GET", "/metrics");
    expect(response.status).toBe(200);
    expect(response.body).toContain("# TYPE deskline_http_requests_total counter");
  });
});

describe("GET /metrics: counters after traffic", () => {
  it("counts requests, latencies, 429s, replays and events after traffic", async () => {
    const before = await scrape();
    const { key } = await newWorkspace(undefined, server.baseUrl);
    const create = () =>
      api.post("/open/v1/contacts", {
        baseUrl: server.baseUrl,
        key,
        body: { name: "Metered" },
        headers: { "Idempotency-Key": "metrics-1" },
      });
    expect((await create()).status).toBe(201);
    const replay = await create();
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect((await api.get("/open/v1/contacts", { baseUrl: server.baseUrl, key })).status).toBe(200);
    // The burst of 3 is spent and the clock stands still: the next one is refused.
    expect((await api.get("/open/v1/contacts", { baseUrl: server.baseUrl, key })).status).toBe(429);
    expect((await request("GET", "/no/such/route", { baseUrl: server.baseUrl })).status).toBe(404);

    const after = await scrape();
    const moved = (sample: string) => value(after, sample) - value(before, sample);
    expect(moved('deskline_http_requests_total{operation="createContact",status="201"}')).toBe(2);
    expect(moved('deskline_http_requests_total{operation="listContacts",status="200"}')).toBe(1);
    expect(moved('deskline_http_requests_total{operation="listContacts",status="429"}')).toBe(1);
    expect(moved('deskline_http_requests_total{operation="createWorkspace",status="201"}')).toBe(1);
    expect(moved('deskline_http_requests_total{operation="unmatched",status="404"}')).toBe(1);
    expect(
      moved('deskline_http_request_duration_seconds_count{operation="createContact",status="201"}'),
    ).toBe(2);
    expect(
      moved(
        'deskline_http_request_duration_seconds_bucket{le="+Inf",operation="createContact",status="201"}',
      ),
    ).toBe(2);
    expect(moved("deskline_rate_limited_total")).toBe(1);
    expect(moved("deskline_idempotent_replays_total")).toBe(1);
    // The writer relays its event before it answers; the replay recorded no second one.
    expect(moved('deskline_events_recorded_total{type="contact.created"}')).toBe(1);
    // The scrape before this one is counted too, under its route.
    expect(moved('deskline_http_requests_total{operation="/metrics",status="200"}')).toBe(1);
  });
});

describe("GET /metrics: gauges read at scrape time", () => {
  it("reads the gauges from the database at scrape time", async () => {
    const { key } = await newWorkspace(undefined, server.baseUrl);
    const base = await scrape();
    expect(value(base, "deskline_database_up")).toBe(1);
    expect(value(base, 'deskline_webhook_endpoints_disabled{reason="owner"}')).toBe(0);
    expect(value(base, "deskline_webhook_deliveries_pending")).toBe(0);

    const endpoint = await api.post("/open/v1/webhook-endpoints", {
      baseUrl: server.baseUrl,
      key,
      body: { url: "https://hooks.example.invalid/metrics" },
    });
    expect(endpoint.status).toBe(201);
    const disabled = await api.patch(`/open/v1/webhook-endpoints/${endpoint.body.id}`, {
      baseUrl: server.baseUrl,
      key,
      body: { status: "disabled" },
    });
    expect(disabled.status).toBe(200);
    // Deliveries as the queue keeps them: one waiting, one settled.
    await client
      .db(databaseName)
      .collection<{
        _id: string;
        workspace_id: string;
        pending_key: string;
        status: string;
        due_at: Date | null;
      }>("webhook_deliveries")
      .insertMany([
        {
          _id: "dlv_waiting",
          workspace_id: "ws_metrics",
          pending_key: "we_metrics evt_metrics",
          status: "pending",
          due_at: new Date(Date.now() + 3_600_000),
        },
        {
          _id: "dlv_settled",
          workspace_id: "ws_metrics",
          pending_key: "settled dlv_settled",
          status: "succeeded",
          due_at: null,
        },
      ]);

    const after = await scrape();
    expect(value(after, 'deskline_webhook_endpoints_disabled{reason="owner"}')).toBe(1);
    expect(value(after, 'deskline_webhook_endpoints_disabled{reason="failures"}')).toBe(0);
    expect(value(after, "deskline_webhook_deliveries_pending")).toBe(1);
  });
});

describe("createMetrics", () => {
  it("counts each event the relay records, by type", async () => {
    // The relay of a store over this file's database, as a writer (or the sweep) runs it.
    const db = client.db(databaseName);
    const store = createStore(db, loadConfig({}), createLogger("silent"));
    const metrics = createMetrics({ store, database: { ping: async () => true }, processMetrics: false });
    const events = [
      newEvent("ws_metrics", "contact.created", { id: "con_1", object: "contact" }),
      newEvent("ws_metrics", "contact.updated", { id: "con_1", object: "contact" }),
    ];
    await db
      .collection<{ _id: string; pending_events: StoredEvent[] }>("contacts")
      .insertOne({ _id: "con_metrics_1", pending_events: events });
    await store.relay.drain("contacts", "con_metrics_1");
    await store.relay.drain("contacts", "con_metrics_1"); // nothing left: nothing counted twice

    const samples = parseExposition(await metrics.render());
    expect(samples.get('deskline_events_recorded_total{type="contact.created"}')).toBe(1);
    expect(samples.get('deskline_events_recorded_total{type="contact.updated"}')).toBe(1);
    expect(await db.collection("events").countDocuments({ workspace_id: "ws_metrics" })).toBe(2);
  });
});

describe("Metrics (what the delivery worker calls)", () => {
  it("counts deliveries by outcome and times attempts", async () => {
    const metrics = new Metrics({ processMetrics: false });
    metrics.deliveryAttempt("failed", 120);
    metrics.deliveryAttempt("succeeded", 40);
    metrics.deliveryFinished("succeeded");
    const samples = parseExposition(await metrics.render());
    expect(samples.get('deskline_webhook_deliveries_total{outcome="succeeded"}')).toBe(1);
    expect(samples.get('deskline_webhook_deliveries_total{outcome="failed"}')).toBeUndefined();
    expect(samples.get('deskline_webhook_attempt_duration_seconds_count{outcome="failed"}')).toBe(1);
    expect(samples.get('deskline_webhook_attempt_duration_seconds_sum{outcome="failed"}')).toBeCloseTo(0.12);
    expect(
      samples.get('deskline_webhook_attempt_duration_seconds_bucket{le="0.05",outcome="succeeded"}'),
    ).toBe(1);
  });
});
