// OpenTelemetry end to end: the real server process, configured only through the standard OTEL_*
// variables, exports to a real OTLP/HTTP receiver this file starts on 127.0.0.1, in both
// encodings. What a self-hoster's collector would see: a span per API request (route template,
// status, workspace), the request's MongoDB commands under it, its id on the log lines, and the
// write's trace stored with the event for its deliveries.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { api, newWorkspace } from "./helpers/api.js";
import { createEndpoint, type Deployment, startDeployment } from "./helpers/delivery.js";
import { startReceiver } from "./helpers/https-receiver.js";
import { eventually, type MainProcess } from "./helpers/main-process.js";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "./helpers/otlp-receiver.js";

vi.setConfig({ testTimeout: 90_000 });

const SERVER = 2; // SpanKind.SERVER
const CLIENT = 3; // SpanKind.CLIENT

// The servers of the tests outside the OTLP blocks export here; each names a service of its own.
let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

function otelEnv(to: OtlpReceiver, protocol: string, serviceName: string): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: to.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    OTEL_SERVICE_NAME: serviceName,
    OTEL_TRACES_SAMPLER: "parentbased_always_on",
    // Export within a fraction of a second instead of the SDK's 5 s, so the test need not wait.
    OTEL_BSP_SCHEDULE_DELAY: "100",
    LOG_FORMAT: "json",
  };
}

const spansOf = (from: OtlpReceiver, service: string, traceId?: string) =>
  from.spans.filter(
    (s) => s.resource["service.name"] === service && (traceId === undefined || s.traceId === traceId),
  );

/** The JSON log lines a process wrote. */
const logLines = (main: MainProcess) =>
  main
    .output()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/**
 * The POST of a contact's spans, once exported: its server span continues the caller's trace and
 * carries route, status and workspace; its MongoDB commands sit under it. Returns the server span.
 */
async function expectPostSpans(
  from: OtlpReceiver,
  service: string,
  callerTrace: string,
  expected: { workspaceId: string; requestId: string | null; databaseName: string },
): Promise<ReceivedSpan> {
  const server = await eventually(
    async () => spansOf(from, service, callerTrace),
    (spans) => spans.some((s) => s.kind === SERVER) && spans.some((s) => s.kind === CLIENT),
    "the POST's spans",
  );
  const post = server.find((s) => s.kind === SERVER) as ReceivedSpan;
  expect(post).toMatchObject({
    name: "POST /open/v1/contacts",
    parentSpanId: "00f067aa0ba902b7",
    attributes: {
      "http.request.method": "POST",
      "http.route": "/open/v1/contacts",
      "http.response.status_code": 201,
      "deskline.workspace.id": expected.workspaceId,
      "deskline.request.id": expected.requestId,
    },
    resource: { "service.name": service },
  });
  // The insert of the contact (and its event) is a MongoDB command of this request.
  const commands = server.filter((s) => s.kind === CLIENT);
  expect(commands.every((s) => s.parentSpanId === post.spanId)).toBe(true);
  expect(commands.map((s) => s.attributes["db.operation.name"])).toContain("insert");
  expect(commands.find((s) => s.attributes["db.operation.name"] === "insert")?.attributes).toMatchObject({
    "db.system.name": "mongodb",
    "db.namespace": expected.databaseName,
    "db.collection.name": "contacts",
  });
  return post;
}

/** The GET of a contact's span: it has a route template, never the raw path with the id. */
async function expectGetSpan(from: OtlpReceiver, service: string, callerTrace: string): Promise<void> {
  const get = await eventually(
    async () =>
      spansOf(from, service).find(
        (s) => s.kind === SERVER && s.attributes["http.route"] === "/open/v1/contacts/{id}",
      ),
    (span) => span !== undefined,
    "the GET's span",
  );
  expect(get?.name).toBe("GET /open/v1/contacts/{id}");
  expect(get?.attributes["http.response.status_code"]).toBe(200);
  expect(get?.traceId).not.toBe(callerTrace);
}

// The tests share nothing but receivers, whose spans they tell apart by service, route and trace,
// and mostly wait on server processes: they run at once, within each block and across the blocks.
describe.concurrent.each([
  { protocol: "http/json", contentType: "application/json" },
  { protocol: "http/protobuf", contentType: "application/x-protobuf" },
])("OTLP over $protocol", ({ protocol, contentType }) => {
  const service = `deskline-test-${protocol.replace("/", "-")}`;
  // A receiver of the block's own: the content types it got are its server's alone.
  let otlp: OtlpReceiver;
  let deployment: Deployment;
  let main: MainProcess;
  let baseUrl: string;
  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    deployment = await startDeployment();
    main = await deployment.startProcess("api", otelEnv(otlp, protocol, service));
    baseUrl = await main.baseUrl;
  }, 120_000);
  afterAll(async () => {
    main?.child.kill("SIGTERM");
    await otlp?.close();
  });

  it("a span per request with route, status and workspace; its MongoDB commands under it; its trace id on the log lines; the write's trace stored with the event", async ({
    expect,
  }) => {
    const { workspaceId, key } = await newWorkspace(undefined, baseUrl);
    // The caller's own trace: the request span must continue it.
    const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
    const created = await api.post("/open/v1/contacts", {
      baseUrl,
      key,
      body: { name: "Traced" },
      headers: { traceparent: `00-${callerTrace}-00f067aa0ba902b7-01` },
    });
    expect(created.status).toBe(201);
    const requestId = created.headers.get("request-id");
    const fetched = await api.get(`/open/v1/contacts/${created.body.id}`, { baseUrl, key });
    expect(fetched.status).toBe(200);

    const post = await expectPostSpans(otlp, service, callerTrace, {
      workspaceId,
      requestId,
      databaseName: deployment.databaseName,
    });
    await expectGetSpan(otlp, service, callerTrace);

    // The access log line of the POST carries its trace and span ids.
    const accessLine = logLines(main).find((line) => line.msg === "request" && line.requestId === requestId);
    expect(accessLine).toMatchObject({ trace_id: callerTrace, span_id: post.spanId, trace_flags: "01" });

    // The event the write made carries the write's trace (for its deliveries), outside its body.
    const stored = await deployment.db.collection("events").findOne({ workspace_id: workspaceId });
    expect(stored?.traceparent).toBe(`00-${callerTrace}-${post.spanId}-01`);
    const listed = await api.get("/open/v1/events", { baseUrl, key });
    expect(JSON.stringify(listed.body)).not.toContain("traceparent");

    expect(otlp.contentTypes).toContain(contentType);
  });

  it("a request with no route and an error status is still a span", async ({ expect }) => {
    const missing = await api.get("/open/v1/nowhere", { baseUrl });
    expect(missing.status).toBe(404);
    const span = await eventually(
      async () =>
        spansOf(otlp, service).find(
          (s) => s.kind === SERVER && s.attributes["url.path"] === "/open/v1/nowhere",
        ),
      (found) => found !== undefined,
      "the 404's span",
    );
    expect(span).toMatchObject({ name: "GET", attributes: { "http.response.status_code": 404 } });
    expect(span?.attributes["http.route"]).toBeUndefined();
  });
});

describe.concurrent("OTEL_TRACES_SAMPLER", () => {
  it("always_off exports nothing, and the log lines carry no trace ids", async ({ expect }) => {
    const deployment = await startDeployment();
    const service = "deskline-test-sampled-off";
    const main = await deployment.startProcess("api", {
      ...otelEnv(receiver, "http/json", service),
      OTEL_TRACES_SAMPLER: "always_off",
    });
    try {
      const baseUrl = await main.baseUrl;
      const { key } = await newWorkspace(undefined, baseUrl);
      expect((await api.get("/open/v1/contacts", { baseUrl, key })).status).toBe(200);
      await new Promise((done) => setTimeout(done, 600));
      expect(spansOf(receiver, service)).toEqual([]);
      // Unsampled spans still carry a context; the log lines say so with trace_flags 00.
      const line = logLines(main).find((l) => l.msg === "request" && l.path === "/open/v1/contacts");
      expect(line?.trace_flags).toBe("00");
    } finally {
      main.child.kill("SIGTERM");
    }
  });
});

describe.concurrent("when not configured", () => {
  it("nothing outside platform/telemetry/sdk.ts imports OpenTelemetry, and platform/telemetry/index.ts loads it only on demand", ({
    expect,
  }) => {
    // Off must cost nothing: no OpenTelemetry module is even loaded unless OTEL_* turn it on.
    const src = join(import.meta.dirname, "../src");
    const files = (readdirSync(src, { recursive: true }) as string[]).filter((f) => f.endsWith(".ts"));
    const importing = files.filter((f) =>
      /from\s+"@opentelemetry\//.test(readFileSync(join(src, f), "utf8").replace(/import type [^;]+;/g, "")),
    );
    expect(importing).toEqual([join("platform", "telemetry", "sdk.ts")]);
    const index = readFileSync(join(src, "platform/telemetry/index.ts"), "utf8");
    expect(index).toMatch(/await import\("\.\/sdk\.js"\)/);
    expect(index).not.toMatch(/^import [^t].*sdk/m);
  });

  it("a server without OTEL_* exports nothing and logs no trace ids", async ({ expect }) => {
    const deployment = await startDeployment();
    const main = await deployment.startProcess("api", { LOG_FORMAT: "json" });
    try {
      const baseUrl = await main.baseUrl;
      const { key } = await newWorkspace(undefined, baseUrl);
      expect((await api.get("/open/v1/contacts", { baseUrl, key })).status).toBe(200);
      // The line is written as the answer goes out: it may reach the process's output after it.
      const line = await eventually(
        async () => logLines(main).find((l) => l.msg === "request" && l.path === "/open/v1/contacts"),
        (found) => found !== undefined,
        "the request's log line",
      );
      expect(line?.trace_id).toBeUndefined();
    } finally {
      main.child.kill("SIGTERM");
    }
    // Once it stopped (a tracing server exports what it buffered then): nothing under the default
    // service name, the one it would have used. Counting all spans would also count the final
    // exports of the other tests' servers, which name services of their own.
    expect(await main.exited).toBe(0);
    expect(spansOf(receiver, "deskline-server")).toEqual([]);
  });
});

// The delivery worker calls withDeliveryAttemptSpan (platform/telemetry/index.ts) around each attempt
// (webhooks/delivery/lane.ts), with the stored event's `traceparent`.
describe.concurrent("delivery attempts", () => {
  it("each attempt is a span in the write's trace, with endpoint, event type, attempt number and outcome", async ({
    expect,
  }) => {
    const deployment = await startDeployment();
    const service = "deskline-test-delivery";
    const main = await deployment.startProcess("all", otelEnv(receiver, "http/json", service));
    try {
      const baseUrl = await main.baseUrl;
      const { key } = await newWorkspace(undefined, baseUrl);
      const hooks = await startReceiver();
      // First attempt refused with 500, second accepted.
      hooks.answer = (_delivery, index) => ({ status: index === 0 ? 500 : 200 });
      const endpoint = await createEndpoint({ key, baseUrl }, hooks.url, ["contact.created"]);
      const created = await api.post("/open/v1/contacts", { baseUrl, key, body: { name: "Delivered" } });
      expect(created.status).toBe(201);
      const write = await eventually(
        async () =>
          spansOf(receiver, service).find(
            (s) => s.kind === SERVER && s.attributes["http.route"] === "/open/v1/contacts",
          ),
        (span) => span !== undefined,
        "the write's span",
      );
      const attempts = await eventually(
        async () =>
          spansOf(receiver, service, write?.traceId)
            .filter((s) => s.attributes["deskline.delivery.attempt"] !== undefined)
            .sort(
              (a, b) =>
                Number(a.attributes["deskline.delivery.attempt"]) -
                Number(b.attributes["deskline.delivery.attempt"]),
            ),
        (spans) => spans.length >= 2,
        "two attempt spans in the write's trace",
      );
      expect(attempts.map((s) => s.attributes)).toEqual([
        expect.objectContaining({
          "deskline.webhook_endpoint.id": endpoint.id,
          "deskline.event.type": "contact.created",
          "deskline.delivery.attempt": 1,
          "deskline.delivery.outcome": "failed",
          "http.response.status_code": 500,
        }),
        expect.objectContaining({
          "deskline.delivery.attempt": 2,
          "deskline.delivery.outcome": "succeeded",
          "http.response.status_code": 200,
        }),
      ]);
      expect(attempts[0]?.status.code).toBe(2); // ERROR
    } finally {
      main.child.kill("SIGTERM");
    }
  });
});
