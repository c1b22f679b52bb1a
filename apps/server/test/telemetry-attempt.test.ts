// The delivery-attempt span helper and the write-time trace capture (platform/telemetry/index.ts) in this
// process, exporting to a real OTLP/HTTP receiver on 127.0.0.1: what the delivery worker relies
// on when it wraps an attempt, checked before it is wired there (telemetry.test.ts checks the
// wired whole through a delivering server).
import { context, trace } from "@opentelemetry/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import {
  currentTraceparent,
  startTelemetry,
  stopTelemetry,
  telemetryActive,
  withDeliveryAttemptSpan,
} from "../src/platform/telemetry/index.js";
import { eventually } from "./helpers/main-process.js";
import { type OtlpReceiver, startOtlpReceiver } from "./helpers/otlp-receiver.js";

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await stopTelemetry();
  await receiver?.close();
});

describe("withDeliveryAttemptSpan and currentTraceparent, while tracing is off", () => {
  it("do nothing and load nothing while tracing is off", async () => {
    expect(telemetryActive()).toBe(false);
    expect(currentTraceparent()).toBeUndefined();
    expect(
      await withDeliveryAttemptSpan(
        { endpointId: "we_1", eventType: "contact.created", attempt: 1 },
        async () => 7,
      ),
    ).toBe(7);
  });
});

describe("withDeliveryAttemptSpan and currentTraceparent, once tracing is on", () => {
  it("record each attempt in the write's trace, with its outcome, and return what the attempt returned", async () => {
    const config = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.url}/`,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "deskline-attempts",
    });
    expect(config.telemetry?.tracesUrl).toBe(`${receiver.url}/v1/traces`);
    await startTelemetry(config.telemetry);
    expect(telemetryActive()).toBe(true);

    // The write: a span active while the event is made, whose context the event keeps.
    const tracer = trace.getTracer("test");
    const write = tracer.startSpan("write");
    const traceparent = context.with(trace.setSpan(context.active(), write), () => currentTraceparent());
    write.end();
    const { traceId, spanId } = write.spanContext();
    expect(traceparent).toBe(`00-${traceId}-${spanId}-01`);
    // Outside any span there is nothing to carry.
    expect(currentTraceparent()).toBeUndefined();

    const failed = { succeeded: false, statusCode: 503, error: "HTTP 503" };
    const info = { endpointId: "we_1", eventType: "contact.created", eventId: "evt_1", traceparent };
    expect(await withDeliveryAttemptSpan({ ...info, attempt: 1 }, async () => failed)).toBe(failed);
    const ok = { succeeded: true, statusCode: 200, error: null };
    expect(await withDeliveryAttemptSpan({ ...info, attempt: 2 }, async () => ok)).toBe(ok);
    await expect(
      withDeliveryAttemptSpan({ ...info, attempt: 3 }, async () => {
        throw new Error("lock lost");
      }),
    ).rejects.toThrow("lock lost");
    // Without the write's context (an event stored before tracing was on) it is a trace of its own.
    await withDeliveryAttemptSpan(
      { endpointId: "we_2", eventType: "ticket.created", attempt: 1 },
      async () => ok,
    );
    await stopTelemetry(); // flushes

    const spans = await eventually(
      async () => receiver.spans.filter((s) => s.resource["service.name"] === "deskline-attempts"),
      (found) => found.length >= 5,
      "the write's and the attempts' spans",
    );
    const attempts = spans.filter((s) => s.attributes["deskline.delivery.attempt"] !== undefined);
    const inWrite = attempts.filter((s) => s.traceId === traceId);
    expect(
      inWrite.map((s) => [
        s.parentSpanId,
        s.attributes["deskline.delivery.attempt"],
        s.attributes["deskline.delivery.outcome"],
      ]),
    ).toEqual([
      [spanId, 1, "failed"],
      [spanId, 2, "succeeded"],
      [spanId, 3, "error"],
    ]);
    expect(inWrite[0]).toMatchObject({
      name: "webhook attempt contact.created",
      kind: 3,
      status: { code: 2, message: "HTTP 503" },
      attributes: {
        "deskline.webhook_endpoint.id": "we_1",
        "deskline.event.type": "contact.created",
        "deskline.event.id": "evt_1",
        "http.response.status_code": 503,
      },
    });
    expect(inWrite[1]?.status.code).toBe(0);
    const alone = attempts.find((s) => s.attributes["deskline.webhook_endpoint.id"] === "we_2");
    expect(alone?.traceId).not.toBe(traceId);
    expect(alone?.parentSpanId).toBe("");
  });
});

describe("the OTEL_* settings (config.ts)", () => {
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" };

  it("are off without an endpoint, or with OTEL_SDK_DISABLED=true", () => {
    expect(loadConfig({}).telemetry).toBeUndefined();
    expect(
      loadConfig({ OTEL_SERVICE_NAME: "x", OTEL_TRACES_SAMPLER: "always_on" }).telemetry,
    ).toBeUndefined();
    expect(loadConfig({ ...endpoint, OTEL_SDK_DISABLED: "true" }).telemetry).toBeUndefined();
  });

  it("default to protobuf, parent-based always-on sampling and the server's own name", () => {
    expect(loadConfig(endpoint).telemetry).toEqual({
      tracesUrl: "http://127.0.0.1:4318/v1/traces",
      protocol: "http/protobuf",
      serviceName: "deskline-server",
      sampler: { name: "parentbased_always_on", ratio: 1 },
      resourceAttributes: {},
    });
  });

  it("take the traces endpoint as is, the traces protocol first, a ratio and resource attributes", () => {
    expect(
      loadConfig({
        ...endpoint,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://collector.invalid/custom/traces",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.25",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod,team=support%20desk",
      }).telemetry,
    ).toMatchObject({
      tracesUrl: "https://collector.invalid/custom/traces",
      protocol: "http/json",
      sampler: { name: "parentbased_traceidratio", ratio: 0.25 },
      resourceAttributes: { "deployment.environment": "prod", team: "support desk" },
    });
  });

  it.each([
    [
      { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
      "OTEL_EXPORTER_OTLP_PROTOCOL must be one of http/protobuf, http/json",
    ],
    [{ OTEL_TRACES_SAMPLER: "sometimes" }, "OTEL_TRACES_SAMPLER must be one of"],
    [{ OTEL_TRACES_SAMPLER_ARG: "2" }, "OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1"],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }, "OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL"],
  ])("refuse %j with a configuration error", (env, message) => {
    expect(() => loadConfig({ ...endpoint, ...env })).toThrow(message);
  });
});
