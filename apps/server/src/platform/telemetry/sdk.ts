// The OpenTelemetry SDK for the server, loaded only when tracing is configured (platform/telemetry/index.ts
// imports it dynamically). Spans: one per API request, one per MongoDB command inside a trace
// (the driver's command monitoring), one per webhook delivery attempt. Exported over OTLP/HTTP
// as JSON or protobuf (docs/operations.md; why it is built this way: docs/decisions.md, "Fastify
// plugin, tracing, readable logs").
import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-node";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
import type { Context as KoaContext, Middleware } from "koa";
import type { CommandFailedEvent, CommandStartedEvent, CommandSucceededEvent, MongoClient } from "mongodb";
import packageJson from "../../../package.json" with { type: "json" };
import type { TelemetryConfig } from "./settings.js";
import type { ActiveTelemetry, DeliveryAttemptInfo } from "./types.js";

const SCOPE = "@deskline/server";

function sampler({ name, ratio }: TelemetryConfig["sampler"]): Sampler {
  switch (name) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return new TraceIdRatioBasedSampler(ratio);
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** Only the chosen protocol's exporter is loaded. */
async function exporter(config: TelemetryConfig): Promise<SpanExporter> {
  if (config.protocol === "http/json") {
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
    return new OTLPTraceExporter({ url: config.tracesUrl });
  }
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-proto");
  return new OTLPTraceExporter({ url: config.tracesUrl });
}

export async function startSdk(config: TelemetryConfig): Promise<ActiveTelemetry> {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      ...config.resourceAttributes,
      [ATTR_SERVICE_NAME]: config.serviceName,
      [ATTR_SERVICE_VERSION]: packageJson.version,
    }),
    sampler: sampler(config.sampler),
    spanProcessors: [new BatchSpanProcessor(await exporter(config))],
  });
  // The AsyncLocalStorage context manager and the W3C trace-context propagator.
  provider.register();
  const tracer = provider.getTracer(SCOPE, packageJson.version);
  return {
    requestSpans: () => requestSpans(tracer),
    instrumentMongo: (client) => instrumentMongo(tracer, client),
    withDeliveryAttemptSpan: (info, fn) => withDeliveryAttemptSpan(tracer, info, fn),
    currentTraceparent,
    logFields,
    shutdown: () => provider.shutdown(),
  };
}

/**
 * The route template, never the raw path (ids would split it): the spec path of an operation
 * (`/open/v1/contacts/{id}`), else the path a fixed route was mounted on (`/healthz`).
 */
function routeOf(ctx: KoaContext): string | undefined {
  const matched = ctx as KoaContext & { _matchedRoute?: string | RegExp };
  // Set by the operation's first middleware (platform/http/operation.ts `mount`).
  const template = ctx.state.routeTemplate as string | undefined;
  if (template) return template;
  return typeof matched._matchedRoute === "string" ? matched._matchedRoute : undefined;
}

/**
 * One SERVER span per request, active while the request is handled (so its MongoDB commands and
 * log lines belong to it), continuing the caller's trace when it sent a `traceparent`.
 */
function requestSpans(tracer: Tracer): Middleware {
  return async (ctx, next) => {
    const parent = propagation.extract(ROOT_CONTEXT, ctx.headers);
    const span = tracer.startSpan(
      ctx.method,
      {
        kind: SpanKind.SERVER,
        attributes: { "http.request.method": ctx.method, "url.path": ctx.path, "url.scheme": ctx.protocol },
      },
      parent,
    );
    try {
      await context.with(trace.setSpan(parent, span), next);
    } catch (error) {
      span.recordException(error as Error);
      throw error;
    } finally {
      const route = routeOf(ctx);
      if (route !== undefined) {
        span.setAttribute("http.route", route);
        span.updateName(`${ctx.method} ${route}`);
      }
      const operation = (ctx as KoaContext & { _matchedRouteName?: string })._matchedRouteName;
      if (operation) span.setAttribute("deskline.operation", operation);
      span.setAttribute("http.response.status_code", ctx.status);
      const workspaceId = (ctx.state.apiKey as { workspace_id?: string } | undefined)?.workspace_id;
      if (workspaceId) span.setAttribute("deskline.workspace.id", workspaceId);
      if (ctx.state.requestId) span.setAttribute("deskline.request.id", String(ctx.state.requestId));
      if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };
}

/**
 * One CLIENT span per MongoDB command, from the driver's command monitoring. Only commands run
 * inside a trace are recorded: the delivery queue's and the sweeps' polls, many a second, would
 * otherwise each be a trace of their own and drown the ones people look at.
 */
function instrumentMongo(tracer: Tracer, client: MongoClient): void {
  const open = new Map<string, Span>();
  const key = (event: { connectionId?: unknown; requestId: number }) =>
    `${String(event.connectionId)}/${event.requestId}`;
  client.on("commandStarted", (event: CommandStartedEvent) => {
    const parent = context.active();
    if (!trace.getSpan(parent)) return;
    const target = event.command[event.commandName];
    const collection = typeof target === "string" ? target : undefined;
    const span = tracer.startSpan(
      collection ? `${event.commandName} ${event.databaseName}.${collection}` : event.commandName,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          "db.system.name": "mongodb",
          "db.system": "mongodb",
          "db.namespace": event.databaseName,
          "db.operation.name": event.commandName,
          ...(collection ? { "db.collection.name": collection } : {}),
          "server.address": event.address,
        },
      },
      parent,
    );
    open.set(key(event), span);
  });
  const finish = (event: CommandSucceededEvent | CommandFailedEvent, failure?: Error) => {
    const span = open.get(key(event));
    if (!span) return;
    open.delete(key(event));
    if (failure) {
      span.recordException(failure);
      span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
    }
    span.end();
  };
  client.on("commandSucceeded", (event) => finish(event));
  client.on("commandFailed", (event) => finish(event, event.failure));
}

/** The fields of an attempt report that say how it went (webhooks/delivery/attempt.ts AttemptReport). */
interface OutcomeLike {
  succeeded: boolean;
  statusCode?: number | null;
  error?: string | null;
}

function isOutcome(value: unknown): value is OutcomeLike {
  return typeof value === "object" && value !== null && typeof (value as OutcomeLike).succeeded === "boolean";
}

async function withDeliveryAttemptSpan<T>(
  tracer: Tracer,
  info: DeliveryAttemptInfo,
  fn: () => Promise<T>,
): Promise<T> {
  // The write's trace when the event carries it; a trace of its own otherwise (never whatever
  // happens to be active in the worker, such as a poll).
  const parent: Context = info.traceparent
    ? propagation.extract(ROOT_CONTEXT, { traceparent: info.traceparent })
    : ROOT_CONTEXT;
  const span = tracer.startSpan(
    `webhook attempt ${info.eventType}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        "deskline.webhook_endpoint.id": info.endpointId,
        "deskline.event.type": info.eventType,
        "deskline.delivery.attempt": info.attempt,
        ...(info.eventId ? { "deskline.event.id": info.eventId } : {}),
      },
    },
    parent,
  );
  try {
    const result = await context.with(trace.setSpan(parent, span), fn);
    if (isOutcome(result)) {
      span.setAttribute("deskline.delivery.outcome", result.succeeded ? "succeeded" : "failed");
      if (typeof result.statusCode === "number")
        span.setAttribute("http.response.status_code", result.statusCode);
      if (!result.succeeded)
        span.setStatus({ code: SpanStatusCode.ERROR, message: result.error ?? "failed" });
    } else {
      span.setAttribute("deskline.delivery.outcome", "done");
    }
    return result;
  } catch (error) {
    span.setAttribute("deskline.delivery.outcome", "error");
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
    throw error;
  } finally {
    span.end();
  }
}

function currentTraceparent(): string | undefined {
  if (!trace.getSpan(context.active())) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

function logFields(): Record<string, string> {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const { traceId, spanId, traceFlags } = span.spanContext();
  return { trace_id: traceId, span_id: spanId, trace_flags: traceFlags.toString(16).padStart(2, "0") };
}
