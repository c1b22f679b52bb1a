// OpenTelemetry tracing, off unless configured (OTEL_* variables, docs/operations.md). This module
// is what the rest of the server calls; it imports nothing of OpenTelemetry itself: the SDK
// (platform/telemetry/sdk.ts) is loaded by a dynamic import only when tracing is on, so a server without
// it loads no OpenTelemetry code, and each call here is one check of a module variable
// (docs/decisions.md, "Fastify plugin, tracing, readable logs").
import type { Middleware } from "koa";
import type { MongoClient } from "mongodb";
import type { TelemetryConfig } from "./settings.js";

import type { ActiveTelemetry, DeliveryAttemptInfo } from "./types.js";

export type { DeliveryAttemptInfo };

let active: ActiveTelemetry | undefined;

/**
 * Starts tracing when `config` is set (loadConfig sets it only when an OTLP endpoint is
 * configured); otherwise does nothing and loads nothing. Call before the database client and the
 * app are made: they ask `telemetryActive()` whether to instrument themselves.
 */
export async function startTelemetry(
  config: TelemetryConfig | undefined,
): Promise<ActiveTelemetry | undefined> {
  if (!config || active) return active;
  const { startSdk } = await import("./sdk.js");
  active = await startSdk(config);
  return active;
}

/** Flushes and stops tracing (graceful shutdown); a no-op when it is off. */
export async function stopTelemetry(): Promise<void> {
  const running = active;
  active = undefined;
  await running?.shutdown();
}

export function telemetryActive(): boolean {
  return active !== undefined;
}

/** The Koa middleware that makes one span per request, or undefined when tracing is off. */
export function requestSpanMiddleware(): Middleware | undefined {
  return active?.requestSpans();
}

/** One span per MongoDB command run inside a trace (a request, a delivery attempt). */
export function instrumentMongoClient(client: MongoClient): void {
  active?.instrumentMongo(client);
}

/**
 * Runs one webhook delivery attempt inside a span (endpoint id, event type, attempt number,
 * outcome), a child of the write that made the event when `traceparent` is given. Returns what
 * `fn` returns. An `AttemptReport`-like result (`succeeded`, `statusCode`, `error`) sets the
 * outcome; a throw records the error and is rethrown. With tracing off it is just `fn()`.
 */
export function withDeliveryAttemptSpan<T>(info: DeliveryAttemptInfo, fn: () => Promise<T>): Promise<T> {
  return active ? active.withDeliveryAttemptSpan(info, fn) : fn();
}

/**
 * The current trace context as a W3C `traceparent` header value, or undefined (tracing off, or
 * no trace here). Taken when an event is made, so its deliveries continue the write's trace.
 */
export function currentTraceparent(): string | undefined {
  return active?.currentTraceparent();
}
