// The shapes the tracing facade (platform/telemetry/index.ts) and the SDK it loads on demand
// (platform/telemetry/sdk.ts) share, apart from both so neither imports the other's module for them.
import type { Middleware } from "koa";
import type { MongoClient } from "mongodb";

/** What a delivery attempt span says about the attempt (the delivery worker fills it). */
export interface DeliveryAttemptInfo {
  endpointId: string;
  eventType: string;
  /** The attempt's number, 1 for the first. */
  attempt: number;
  eventId?: string;
  /** The stored event's `traceparent` (the write's trace), so the attempt joins that trace. */
  traceparent?: string | undefined;
}

/** The running SDK, as platform/telemetry/sdk.ts builds it. */
export interface ActiveTelemetry {
  requestSpans(): Middleware;
  instrumentMongo(client: MongoClient): void;
  withDeliveryAttemptSpan<T>(info: DeliveryAttemptInfo, fn: () => Promise<T>): Promise<T>;
  currentTraceparent(): string | undefined;
  /** pino's mixin: the active trace's ids on each log line. */
  logFields(): Record<string, string>;
  /** Exports what is buffered, then stops. */
  shutdown(): Promise<void>;
}
