/**
 * The standard OpenTelemetry variables the server reads. Tracing is on only when an OTLP endpoint
 * is given (and OTEL_SDK_DISABLED is not true); the other variables are read, and checked, only
 * then. gRPC is not offered: the server exports over HTTP.
 */

import { ConfigError, custom, flag, oneOf, settingGroup, text } from "../settings.js";

/** OTEL_EXPORTER_OTLP_PROTOCOL values the server can export with (both OTLP over HTTP). */
export const OTLP_PROTOCOLS = ["http/protobuf", "http/json"] as const;
/** OTEL_TRACES_SAMPLER values, as the OpenTelemetry specification names them. */
export const TRACE_SAMPLERS = [
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
  "always_on",
  "always_off",
  "traceidratio",
] as const;

/** Tracing settings; present only when an OTLP endpoint is configured (docs/operations.md). */
export interface TelemetryConfig {
  /** Where spans are POSTed: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`. */
  tracesUrl: string;
  protocol: (typeof OTLP_PROTOCOLS)[number];
  serviceName: string;
  sampler: { name: (typeof TRACE_SAMPLERS)[number]; ratio: number };
  /** OTEL_RESOURCE_ATTRIBUTES: `key=value,…`, added to every span's resource. */
  resourceAttributes: Record<string, string>;
}

/** OTEL_RESOURCE_ATTRIBUTES values are percent-encoded; a stray `%` is kept as written. */
function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function resourceAttributes(raw: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const item of raw.split(",")) {
    const at = item.indexOf("=");
    if (at <= 0) continue;
    attributes[item.slice(0, at).trim()] = safeDecode(item.slice(at + 1).trim());
  }
  return attributes;
}

function ratio(raw: string): number {
  const value = Number(raw);
  if (!(value >= 0 && value <= 1)) {
    throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got ${JSON.stringify(raw)}`);
  }
  return value;
}

const settings = {
  endpoint: text("OTEL_EXPORTER_OTLP_ENDPOINT", {
    accepts: "an http(s) URL",
    doc: "OpenTelemetry tracing: the OTLP/HTTP collector's base URL (spans go to `<it>/v1/traces`); unset (and no `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) leaves tracing off. See [Tracing](#tracing-opentelemetry)",
  }),
  tracesEndpoint: text("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", {
    accepts: "an http(s) URL",
    doc: "the full URL spans are sent to, instead of the above",
  }),
  protocol: oneOf("OTEL_EXPORTER_OTLP_PROTOCOL", OTLP_PROTOCOLS, {
    doc: "how spans are sent: OTLP over HTTP, as protobuf or JSON (gRPC is not offered)",
  }),
  tracesProtocol: oneOf("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", OTLP_PROTOCOLS, {
    optional: true,
    defaultDoc: "the above",
    doc: "the same, for traces only",
  }),
  serviceName: text("OTEL_SERVICE_NAME", {
    default: "deskline-server",
    doc: "the `service.name` of every span; name API and worker processes apart if you like",
  }),
  resourceAttributes: custom("OTEL_RESOURCE_ATTRIBUTES", {
    accepts: "`key=value,…`",
    unset: "",
    defaultDoc: "unset",
    read: resourceAttributes,
    doc: "more resource attributes, `key=value,key=value` (percent-encoded values)",
  }),
  sampler: oneOf("OTEL_TRACES_SAMPLER", TRACE_SAMPLERS, {
    doc: "which spans are kept, as the OpenTelemetry specification names its samplers; `parentbased_…` ones follow the caller's `traceparent` decision",
  }),
  samplerRatio: custom("OTEL_TRACES_SAMPLER_ARG", {
    accepts: "a number, 0 to 1",
    unset: "1",
    read: ratio,
    doc: "the ratio of the `…traceidratio` samplers",
  }),
  disabled: flag("OTEL_SDK_DISABLED", {
    default: false,
    doc: "`true` keeps tracing off even with an endpoint set",
  }),
};

/** The endpoint spans go to, which must be http(s); `name` is the variable it came from. */
function tracesUrl(endpoint: string | undefined, tracesEndpoint: string | undefined): string {
  const url = tracesEndpoint ?? `${endpoint?.replace(/\/+$/, "")}/v1/traces`;
  if (!URL.canParse(url) || !["http:", "https:"].includes(new URL(url).protocol)) {
    const name = tracesEndpoint ? "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" : "OTEL_EXPORTER_OTLP_ENDPOINT";
    throw new ConfigError(
      `${name} must be an http(s) URL, got ${JSON.stringify(tracesEndpoint ?? endpoint)}`,
    );
  }
  return url;
}

/** `telemetry`: undefined (tracing off, nothing loaded) unless an OTLP endpoint is set. */
export const telemetrySettings = settingGroup(settings, {
  build: (values): { telemetry: TelemetryConfig | undefined } => {
    if (values.disabled) return { telemetry: undefined };
    const { endpoint, tracesEndpoint } = values;
    if (!tracesEndpoint && !endpoint) return { telemetry: undefined };
    const url = tracesUrl(endpoint, tracesEndpoint);
    const protocol = values.tracesProtocol ?? values.protocol;
    const name = values.sampler;
    return {
      telemetry: {
        tracesUrl: url,
        protocol,
        serviceName: values.serviceName,
        sampler: { name, ratio: values.samplerRatio },
        resourceAttributes: values.resourceAttributes,
      },
    };
  },
});
