import { describe, expect, it, vi } from "vitest";
import { api, assertErrorShape, newWorkspace, request } from "./helpers/api.js";
import { startDeployment } from "./helpers/delivery.js";
import { parseExposition } from "./helpers/exposition.js";
import { startReceiver } from "./helpers/https-receiver.js";
import { eventually } from "./helpers/main-process.js";

// A real ROLE=worker server (the composition main runs, here in this process, beside an API
// server) serves /healthz, /readyz and /metrics (behind METRICS_TOKEN, with its delivery
// counters) on its port, and nothing of the API.

vi.setConfig({ testTimeout: 180_000 });
const METRICS_TOKEN = "worker-metrics-token";

async function scrape(baseUrl: string): Promise<Map<string, number>> {
  const response = await request("GET", "/metrics", {
    baseUrl,
    headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
  });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(response.body as string);
}

const SUCCEEDED = 'deskline_webhook_deliveries_total{outcome="succeeded"}';

describe("a ROLE=worker process", () => {
  it("answers the probes, serves its delivery counters behind METRICS_TOKEN, and 404s the API", async () => {
    const deployment = await startDeployment({ METRICS_TOKEN });
    const apiProcess = await deployment.start("api");
    const worker = await deployment.start("worker");
    const apiUrl = await apiProcess.baseUrl;
    const workerUrl = await worker.baseUrl;
    expect(workerUrl).not.toBe(apiUrl);
    expect(worker.output()).toMatch(
      /"role":"worker"[^\n]*"msg":"listening"|"msg":"listening"[^\n]*"role":"worker"/,
    );

    // The probes, checked against the spec's getHealth and getReadiness.
    const health = await request("GET", "/healthz", { baseUrl: workerUrl });
    expect(health).toMatchObject({ status: 200, body: { status: "ok" } });
    const ready = await request("GET", "/readyz", { baseUrl: workerUrl });
    expect(ready).toMatchObject({ status: 200, body: { status: "ready" } });

    // The API's 405, with Allow, for a method a probe does not have.
    const wrongMethod = await request("POST", "/healthz", { baseUrl: workerUrl });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toMatch(/GET/);

    // The same token rule as the API's /metrics.
    expect((await request("GET", "/metrics", { baseUrl: workerUrl })).status).toBe(401);
    const wrong = await request("GET", "/metrics", {
      baseUrl: workerUrl,
      headers: { Authorization: "Bearer nope" },
    });
    expect(wrong.status).toBe(401);

    // A delivery, made by the worker: its counters say so, the API process's do not.
    const { key } = await newWorkspace(undefined, apiUrl);
    const receiver = await startReceiver();
    const endpoint = await api.post("/open/v1/webhook-endpoints", {
      key,
      baseUrl: apiUrl,
      body: { url: receiver.url, events: ["contact.created"] },
    });
    expect(endpoint.status).toBe(201);
    const before = await scrape(workerUrl);
    expect(before.get(SUCCEEDED) ?? 0).toBe(0);
    const contact = await api.post("/open/v1/contacts", { key, baseUrl: apiUrl, body: { name: "Probed" } });
    expect(contact.status).toBe(201);
    const after = await eventually(
      () => scrape(workerUrl),
      (samples) => samples.get(SUCCEEDED) === 1,
      "the worker's succeeded delivery",
      90_000,
    );
    expect(receiver.received).toHaveLength(1);
    expect(after.get('deskline_webhook_attempt_duration_seconds_count{outcome="succeeded"}')).toBe(1);
    expect(after.get('deskline_http_requests_total{operation="/healthz",status="200"}')).toBe(1);
    expect(after.get("deskline_database_up")).toBe(1);
    expect((await scrape(apiUrl)).get(SUCCEEDED) ?? 0).toBe(0);

    // Nothing of the API: its paths are the API's 404 route_not_found, even with a valid key.
    for (const [method, path] of [
      ["GET", "/open/v1/contacts"],
      ["POST", "/open/v1/contacts"],
      ["GET", `/open/v1/contacts/${contact.body.id}`],
      ["GET", "/open/v1/openapi.json"],
      ["GET", "/admin/v1/workspaces"],
      ["GET", "/open/v1/docs"],
    ] as const) {
      const response = await fetch(new URL(path, workerUrl), {
        method,
        headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
        body: method === "POST" ? JSON.stringify({ name: "Nope" }) : undefined,
      });
      const body = (await response.json()) as { error: { code: string } };
      expect(response.status, `${method} ${path}`).toBe(404);
      assertErrorShape(404, body);
      expect(body.error.code).toBe("route_not_found");
      expect(response.headers.get("request-id")).toMatch(/^req_/);
    }
    await receiver.close();
  });
});
